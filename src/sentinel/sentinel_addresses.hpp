// Where the master is, according to Sentinel: an address source (src/wire/address_source.hpp)
// whose every answer comes from asking the sentinels in turn SENTINEL GET-MASTER-ADDR-BY-NAME. The
// last sentinel that named the master is asked first, by every source of the client (a silent one
// is paid for once, not by each new connection); a sentinel that cannot be reached, does not answer
// within a quarter of the requests' deadline, or does not know the name is skipped. When none names
// it, the round fails with what they said (errc::unknown_master if one answered that it does not
// know the name), and the connection tries again after its backoff. The connection then confirms the
// answer with ROLE (login_step::role). With the address, in the same write, the sentinel is asked
// SENTINEL REPLICAS: the replicas it knows (replicas_named()), which replica sync expects the master
// to list. In a failover's first second, the old master no longer lists the replica just promoted,
// while a sentinel that has not heard of the switch still names the old master and that replica.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "wire/address_source.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

/// The last +switch-master a sentinel announced for the URL's master (src/sentinel/sentinel_watch.hpp),
/// shared by the client's address sources: the first connect after a switch goes straight to the new
/// master, not to a sentinel that may not have heard of the switch yet and name the old one (which
/// answers ROLE as a master until Sentinel demotes it, seconds later).
struct master_switch {
  server_address to;
  std::uint64_t count = 0;  // switches so far
};

/// Which sentinel the client's sources ask first: the last one that named the master (or the one
/// after the last one that failed to), shared by them all.
struct sentinel_preference {
  std::size_t first = 0;  // index in the URL's sentinels (endpoint::sentinels)
};

/// How long a sentinel has to answer (connecting and logging in included) before the next one is
/// asked: well below the deadline of the requests that wait for the master's address, so that a
/// silent sentinel or two leave time for the others to answer and the request to be sent.
std::chrono::milliseconds sentinel_answer_bound(const config& cfg);

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
  void cancel() noexcept override { sink_ = nullptr; }
  void stop() noexcept override;
  const std::vector<server_address>& replicas_named() const noexcept override { return replicas_; }

 private:
  class query;
  class replicas_query;

  void ask();
  void answered(std::error_code ec, const server_address* master);
  void on_connected() override {}
  void on_disconnected(std::error_code) override {}
  void on_connect_failed(std::error_code ec) override;

  asio::any_io_executor executor_;
  endpoint sentinel_ep_;  // the sentinels' credentials, TLS as the URL says
  config cfg_;
  std::vector<server_address> sentinels_;
  std::shared_ptr<sentinel_preference> preference_;
  std::size_t asking_ = 0;  // the sentinel asked now (index in sentinels_)
  std::size_t asked_ = 0;   // sentinels asked in this round
  bool unknown_ = false;   // one of them answered that it does not know the name
  std::error_code last_error_;
  address_sink* sink_ = nullptr;
  std::shared_ptr<connection> conn_;  // to the sentinel being asked
  std::unique_ptr<query> query_;
  std::unique_ptr<replicas_query> replicas_query_;  // written with query_, answers for both
  std::vector<server_address> replicas_;            // what the sentinel that answered last knows
  std::shared_ptr<const master_switch> last_switch_;
  std::uint64_t switches_seen_ = 0;
  bool in_flight_ = false;
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted handlers check it
};

}  // namespace deadbolt::detail
