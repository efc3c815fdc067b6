// Where the master is, according to Sentinel: an address source (src/wire/address_source.hpp)
// whose every answer comes from asking the sentinels in turn SENTINEL GET-MASTER-ADDR-BY-NAME. It
// carries out what its core decides (src/sentinel/sentinel_resolution.hpp: which sentinel is asked,
// when the next one is, what a round ends with, a switch announced by the watch) and reads the
// replies (src/sentinel/sentinel_replies.hpp). The connection confirms the answer with ROLE
// (login_step::role). With the address, in the same write, the sentinel is asked SENTINEL REPLICAS:
// the replicas it knows (replicas_named()), which replica sync expects the master to list. In a
// failover's first second, the old master no longer lists the replica just promoted, while a
// sentinel that has not heard of the switch still names the old master and that replica.
#pragma once

#include <cstddef>
#include <memory>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "sentinel/sentinel_resolution.hpp"
#include "wire/address_source.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

/// How to talk to the sentinels of `ep` (a redis+sentinel:// endpoint): as plain servers (no ROLE
/// check, database 0) with config::sentinel_user/password, TLS as the URL says.
endpoint sentinel_endpoint(const endpoint& ep, const config& cfg);

class sentinel_addresses final : public address_source, private connection_listener {
 public:
  /// Asks the sentinels of `ep` (a redis+sentinel:// endpoint) with config::sentinel_user/password,
  /// `preference`'s first; after a switch announced in `last_switch`, answers its new master once
  /// without asking.
  sentinel_addresses(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                     std::shared_ptr<sentinel_preference> preference,
                     std::shared_ptr<const master_switch> last_switch = nullptr);
  ~sentinel_addresses() override;

  void next(address_sink& sink) override;
  void cancel() noexcept override;
  void stop() noexcept override;
  const std::vector<server_address>& replicas_named() const noexcept override { return core_.replicas(); }

 private:
  class query;
  class replicas_query;

  void carry_out(const sentinel_resolution::action& a);
  void ask(std::size_t index);
  void answered();
  void on_connected() override {}
  void on_disconnected(std::error_code) override {}
  void on_connect_failed(std::error_code ec) override;

  asio::any_io_executor executor_;
  endpoint sentinel_ep_;  // the sentinels' credentials, TLS as the URL says
  config cfg_;
  std::vector<server_address> sentinels_;
  std::shared_ptr<sentinel_preference> preference_;  // the core's, kept alive here
  std::shared_ptr<const master_switch> last_switch_;  // likewise
  sentinel_resolution core_;
  address_sink* sink_ = nullptr;  // the open round's (the core says when it is answered)
  std::shared_ptr<connection> conn_;  // to the sentinel being asked
  std::unique_ptr<query> query_;
  std::unique_ptr<replicas_query> replicas_query_;  // written with query_, answers for both
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted handlers check it
};

}  // namespace deadbolt::detail
