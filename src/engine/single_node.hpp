// One standalone server: one command connection (opened with the first request) and one subscriber
// connection (opened with the first wait). Every key is route 0, until the server refuses a script
// whose keys are in different hash slots (a cluster node, proxy or managed service behind redis://);
// from then on a key's route is its slot. Behind Sentinel (redis+sentinel://) both connections ask
// the sentinels where the master is before every connect, and confirm it with ROLE; an acquire made
// while the client has not heard from the sentinels for a while waits until they were asked again
// and ROLE confirmed the master (src/sentinel/sentinel_gate.hpp); a command answered READONLY (the
// master was demoted by a failover) did not run: the command connection reconnects to the new
// master and sends it again. A sentinel connection follows +switch-master: a failover moves both
// connections at once (waiters resubscribe and look again; what was in flight follows the usual
// rules: an unanswered acquire is verified, never re-run).
#pragma once

#include <memory>
#include <utility>

#include "base/key_slot.hpp"
#include "engine/master_finder.hpp"
#include "engine/topology.hpp"
#include "pubsub/subscriber.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

#ifndef DEADBOLT_HAS_SENTINEL
#error "DEADBOLT_HAS_SENTINEL must be defined (src/CMakeLists.txt): it changes this class"
#endif

// Without Sentinel (DEADBOLT_SENTINEL=OFF) the class has none of the failover handling (its virtual
// overrides would keep that code in every static program).
class single_node final : public topology
#if DEADBOLT_HAS_SENTINEL
    , private redirect_handler, private connection_listener, private master_finder::listener
#endif
{
 public:
  single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  ~single_node() override;

  void submit(request& r) override;
  std::uint32_t route_of(std::string_view key) const override { return slots_enforced_ ? key_slot(key) : 0; }
  std::uint32_t node_of(std::string_view) const override { return 0; }
  bool cross_slot_refused() override { return !std::exchange(slots_enforced_, true); }
  subscriber& subscriber_for(std::string_view channel) override;
  subscriber* existing_subscriber(std::string_view) const override { return subs_.get(); }
  bool settled() const override;
  void stop_subscribers() override;
  void close() override;

 private:
  std::unique_ptr<address_source> addresses() const;
  void start_watch();
#if DEADBOLT_HAS_SENTINEL
  void on_redirect(request& r, std::string_view error_text) override;
  void on_connected() override;
  bool admitted(request& r);
  bool holding() const;
  void on_disconnected(std::error_code) override {}
  void on_master_switched() override;
#endif

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
#if DEADBOLT_HAS_SENTINEL
  std::unique_ptr<master_finder> sentinels_;  // behind Sentinel only
#endif
  std::shared_ptr<connection> commands_;
  std::shared_ptr<subscriber> subs_;
  bool started_ = false;
  // The server refused a script mixing hash slots: it enforces them (a cluster node or proxy, a
  // managed service). Learned rather than probed: a plain server keeps renewing 100 keys per script.
  bool slots_enforced_ = false;
#if DEADBOLT_HAS_SENTINEL
  bool demoted_ = false;  // a READONLY came: the connection is being moved to the new master
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
#endif
};

}  // namespace deadbolt::detail
