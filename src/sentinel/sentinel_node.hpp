// A master found through Sentinel (redis+sentinel://): single_node with the sentinels as its
// master_finder (sentinel_finder.hpp: both connections ask the sentinels where the master is before
// every connect, and confirm it with ROLE; an acquire made while the client has not heard from the
// sentinels for a while waits until they were asked again and ROLE confirmed the master), plus what a
// failover asks of it here: a command answered READONLY (the master was demoted) did not run, so the
// command connection reconnects to the new master and sends it again; a +switch-master moves both
// connections at once (waiters resubscribe and look again; what was in flight follows the usual
// rules: an unanswered acquire is verified, never re-run).
#pragma once

#include <memory>
#include <string_view>
#include <system_error>

#include "engine/master_finder.hpp"
#include "engine/single_node.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class sentinel_node final : public single_node,
                            private redirect_handler,
                            private connection_listener,
                            private master_finder::listener {
 public:
  sentinel_node(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg);
  ~sentinel_node() override;

 private:
  void on_redirect(request& r, std::string_view error_text) override;
  void on_connected() override;
  void on_disconnected(std::error_code) override {}
  void on_master_switched() override;

  bool demoted_ = false;  // a READONLY came: the connection is being moved to the new master
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace deadbolt::detail
