// The master of a Sentinel group, for single_node: every connection's address source asks the
// sentinels (sentinel_addresses), and a watch follows +switch-master (sentinel_watch). The address
// the watch last announced is shared with the sources, so the first connect after a switch goes
// straight to the new master, and so is the sentinel that last answered, so a silent one is paid for
// once. What the watch hears and what the sentinels answer make the client's view of the master
// (sentinel_view); an acquire made while that view is too old waits for the sentinels to be asked
// again and ROLE to confirm the master (sentinel_gate).
#pragma once

#include <memory>

#include "engine/master_finder.hpp"
#include "sentinel/sentinel_addresses.hpp"
#include "sentinel/sentinel_gate.hpp"
#include "sentinel/sentinel_view.hpp"
#include "sentinel/sentinel_watch.hpp"

namespace deadbolt::detail {

class sentinel_finder final : public master_finder, private sentinel_watch::listener, private sentinel_gate::listener {
 public:
  /// `ep` is a redis+sentinel:// endpoint; `owner` hears of switches.
  sentinel_finder(asio::any_io_executor ex, const endpoint& ep, const config& cfg, master_finder::listener& owner);

  std::unique_ptr<address_source> addresses() override;
  void watch() override { watch_.start(); }
  void stop() override;
  void attach(std::shared_ptr<connection> commands) override { gate_.attach(std::move(commands)); }
  bool admit(request& r) override { return gate_.admit(r); }
  void commands_ready() override { gate_.commands_ready(); }
  bool holding() const override { return gate_.holding(); }

 private:
  void on_master_switched(const server_address& to) override;
  void on_watch_subscribed() override { gate_.check_due(); }
  void on_master_moved(const server_address* to) override;

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  master_finder::listener& owner_;
  std::shared_ptr<master_switch> last_switch_ = std::make_shared<master_switch>();
  std::shared_ptr<sentinel_preference> preference_ = std::make_shared<sentinel_preference>();
  sentinel_view view_;
  sentinel_watch watch_;
  sentinel_gate gate_;
};

}  // namespace deadbolt::detail
