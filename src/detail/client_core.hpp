// The engine behind deadbolt::client: configuration, the topology that routes requests and
// subscriptions to connections (src/detail/topology.hpp), the held-lock table and the watchdog that
// renews it (src/detail/watchdog.cpp). Everything here runs on the client's executor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "deadbolt/config.hpp"
#include "deadbolt/detail/engine.hpp"
#include "deadbolt/port/asio.hpp"
#include "detail/blocking_gate.hpp"
#include "detail/holds.hpp"
#include "detail/observer.hpp"
#include "detail/op_pool.hpp"
#include "detail/subscriber.hpp"
#include "detail/topology.hpp"
#include "detail/watchdog.hpp"

namespace deadbolt::detail {

/// Base of every engine operation: lets cancel_operation find it safely.
class operation {
 public:
  virtual void cancel() = 0;
  std::uint64_t generation = 0;
  op_ref ref() { return {this, generation}; }

 protected:
  ~operation() = default;
};

class client_core : public std::enable_shared_from_this<client_core> {
 public:
  client_core(const asio::any_io_executor& ex, const config& cfg);
  ~client_core();

  /// What must outlive everything below (declared first: destroyed last): the blocking client's
  /// io_context, which handles may outlive the client with.
  std::shared_ptr<void> keep_alive;

  /// Sends a request to the node that serves r.route_key (connecting first if needed).
  void submit(request& r);
  /// Completes `done` later (never inside the caller), on the executor.
  void complete_later(completion& done, std::error_code ec, std::int64_t value = 0);
  /// Fire-and-forget command (e.g. the unlock latch DEL); errors are ignored.
  void send_and_forget(std::string_view verb, std::string_view key);
  /// The subscriber that serves `channel` (created on first use), or null if it does not exist yet.
  subscriber& subscriptions(std::string_view channel) { return topo_->subscriber_for(channel); }
  subscriber* existing_subscriptions(std::string_view channel) const { return topo_->existing_subscriber(channel); }

  /// Registers a successful acquisition sent at `sent_ns`, after which the server counts
  /// `server_count` holds of this owner; none if the table is full (of live holds).
  std::uint32_t record_acquired(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                                std::int64_t sent_ns, std::int64_t server_count);
  /// Registers an acquire whose outcome is unknown: the next acquire of it reads the server's count
  /// first, and the owner's last unlock releases whatever the server still counts.
  void note_unknown(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                    std::int64_t sent_ns);
  /// An unlock failed: the hold leaves the watchdog (it ends with its lease); holds that remain are lost.
  void unlock_failed(std::string_view name, std::int64_t owner, hold_field field);
  /// A hold that is not renewed and whose lease has ended.
  static bool lapsed(const hold& h, std::int64_t now_ns);
  void lease_lost(std::uint32_t hold_index);
  /// The owner's unlock released its last hold: the entry goes (the hold time is reported).
  void hold_released(std::uint32_t hold_index);
  /// The route (node) that serves `key`; requests of one route may share a script call.
  std::uint32_t route_of(std::string_view key) const { return topo_ ? topo_->route_of(key) : 0; }

  std::int64_t watchdog_ms() const { return cfg.watchdog_timeout.count(); }
  std::int64_t latch_ttl_ms() const;

  asio::any_io_executor executor;
  config cfg;
  observer observe;  ///< config::log and config::metrics
  endpoint ep;  ///< where the configuration points (filled by config::validate, before config_error)
  std::error_code config_error;
  std::string id;                  ///< client UUID
  std::string_view publish_command = "publish";
  /// shutdown() was called: no new operation starts, and running ones end at their next step. The
  /// command connection stays open (if it is up) until what they already decided to send (releases,
  /// unlocks, leaving a fair queue) has been answered, at most config::command_timeout.
  bool stopped = false;
  bool closed() const { return closed_; }
  /// Closes the connections: every request still queued fails with errc::shutting_down.
  void close();
  /// Wakes parked waiters with shutting_down; commands keep flowing.
  void stop_waiters();
  /// Polls until the connections have nothing queued or in flight, then closes.
  void drain(std::int64_t until_ns);

  blocking_gate gate;  ///< for the blocking facade (src/blocking.cpp)

  hold_table holds;
  lease_lost_handler on_lost;

  asio::steady_timer drain_timer;

  op_pools pools;  ///< every operation kind's recycled objects
  watchdog dog;  ///< renews the holds without a fixed lease (src/detail/watchdog.cpp)

 private:
  std::unique_ptr<topology> topo_;  ///< null when the configuration is invalid
  bool closed_ = false;
  /// Finds or inserts, making room from ended leases when the table is full.
  std::uint32_t hold_slot(std::string_view name, std::int64_t owner, hold_field field, std::int64_t now_ns);
};

/// Maps an error reply's text to an error code.
std::error_code server_error_code(std::string_view text);

}  // namespace deadbolt::detail
