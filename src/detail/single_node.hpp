// One standalone server: one command connection (opened with the first request) and one subscriber
// connection (opened with the first wait). Every key is route 0. Behind Sentinel (redis+sentinel://)
// both connections ask the sentinels where the master is before every connect, and confirm it with
// ROLE; a command answered READONLY (the master was demoted by a failover) did not run: the command
// connection reconnects to the new master and sends it again. A sentinel connection follows
// +switch-master: a failover moves both connections at once (waiters resubscribe and look again;
// what was in flight follows the usual rules: an unanswered acquire is verified, never re-run).
#pragma once

#include <memory>

#include "detail/connection.hpp"
#include "detail/master_finder.hpp"
#include "detail/subscriber.hpp"
#include "detail/topology.hpp"

namespace deadbolt::detail {

class single_node final : public topology,
                          private redirect_handler,
                          private connection_listener,
                          private master_finder::listener {
 public:
  single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  ~single_node() override;

  void submit(request& r) override;
  std::uint32_t route_of(std::string_view) const override { return 0; }
  subscriber& subscriber_for(std::string_view channel) override;
  subscriber* existing_subscriber(std::string_view) const override { return subs_.get(); }
  bool settled() const override;
  void stop_subscribers() override;
  void close() override;

 private:
  std::unique_ptr<address_source> addresses() const;
  void on_redirect(request& r, std::string_view error_text) override;
  void on_connected() override { demoted_ = false; }
  void on_disconnected(std::error_code) override {}
  void on_master_switched() override;
  void start_watch();

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  std::unique_ptr<master_finder> sentinels_;  // behind Sentinel only
  std::shared_ptr<connection> commands_;
  std::shared_ptr<subscriber> subs_;
  bool started_ = false;
  bool demoted_ = false;  // a READONLY came: the connection is being moved to the new master
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace deadbolt::detail
