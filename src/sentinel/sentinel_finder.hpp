// The master of a Sentinel group, for single_node: every connection's address source asks the
// sentinels (sentinel_addresses), and a watch follows +switch-master (sentinel_watch). The address
// the watch last announced is shared with the sources, so the first connect after a switch goes
// straight to the new master.
#pragma once

#include <memory>

#include "detail/master_finder.hpp"
#include "sentinel/sentinel_addresses.hpp"
#include "sentinel/sentinel_watch.hpp"

namespace deadbolt::detail {

class sentinel_finder final : public master_finder, private sentinel_watch::listener {
 public:
  /// `ep` is a redis+sentinel:// endpoint; `owner` hears of switches.
  sentinel_finder(asio::any_io_executor ex, const endpoint& ep, const config& cfg, master_finder::listener& owner);

  std::unique_ptr<address_source> addresses() override;
  void watch() override { watch_.start(); }
  void stop() override { watch_.stop(); }

 private:
  void on_master_switched(const server_address& to) override;

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  master_finder::listener& owner_;
  std::shared_ptr<master_switch> last_switch_ = std::make_shared<master_switch>();
  sentinel_watch watch_;
};

}  // namespace deadbolt::detail
