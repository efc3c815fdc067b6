// What an operation sees of its client: the lock kinds' acquire (src/lock/lock_attempt.cpp), unlock and
// queries (src/lock/lock_ops.cpp), the semaphores' and the latch's calls (src/semaphore/), and the wait op
// that runs the waiting ones (src/engine/wait_op.*). They send requests, complete later, park on a
// channel's subscriber, keep the hold table, read a few settings and report to the log and metrics
// hooks; the connections, the topology, the watchdog and shutdown are not theirs to touch.
// client_core implements it; no call allocates.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>
#include <system_error>

#include "base/observer.hpp"
#include "deadbolt/detail/async.hpp"
#include "engine/holds.hpp"

namespace deadbolt::detail {

class request;
class subscriber;
class op_pools;

/// Base of every engine operation: lets cancel_operation find it safely.
class operation {
 public:
  virtual void cancel() = 0;
  std::uint64_t generation = 0;
  op_ref ref() { return {this, generation}; }

 protected:
  ~operation() = default;
};

/// The configuration values operations read, fixed when the client is made.
struct op_settings {
  std::string_view client_id;     ///< the first half of every owner field
  std::string_view publish;       ///< the publish command of the scripts: "publish"
  std::int64_t watchdog_ms = 0;   ///< the lease of a hold taken without one (config::watchdog_timeout)
  std::int64_t latch_ttl_ms = 0;  ///< an unlock latch outlives every retry of its unlock
  std::int64_t fair_wait_ms = 0;  ///< a fair waiter's place when it waits without bound
  bool syncs_replicas = false;    ///< config::replica_sync is not off
  int sync_retries = 0;           ///< config::replica_sync_retries
  std::int64_t sync_retry_delay_ms = 0;
  lease_margin margin;            ///< what the client's deadline of a hold leaves of its lease (holds.hpp)
};

class op_context {
 public:
  explicit op_context(const config& cfg) : observe(cfg) {}

  /// config::log and config::metrics: each call site is one line (src/base/observer.hpp).
  observer observe;

  // ---- requests
  /// Sends a request to the node that serves r.route_key (connecting first if needed).
  virtual void submit(request& r) = 0;
  /// Completes `done` later (never inside the caller), on the executor.
  virtual void complete_later(completion& done, std::error_code ec, std::int64_t value = 0) = 0;
  /// Fire-and-forget command (e.g. the unlock latch DEL); errors are ignored.
  virtual void send_and_forget(std::string_view verb, std::string_view key) = 0;

  // ---- waiting
  /// The subscriber that serves `channel` (created on first use).
  virtual subscriber& subscriptions(std::string_view channel) = 0;
  /// ... or null if it does not exist yet.
  virtual subscriber* existing_subscriptions(std::string_view channel) const = 0;

  // ---- holds
  /// The held-lock table, to look up and count down holds. What the watchdog, the lease-lost handler
  /// and the metrics hook must hear of goes through the calls below.
  virtual hold_table& held_locks() = 0;
  /// Registers a successful acquisition sent at `sent_ns`, after which the server counts
  /// `server_count` holds of this owner; hold_table::none if the table is full (of live holds).
  virtual std::uint32_t record_acquired(std::string_view name, std::int64_t owner, hold_field field,
                                        std::int64_t lease_ms, std::int64_t sent_ns, std::int64_t server_count) = 0;
  /// Registers an acquire whose outcome is unknown: the next acquire of it reads the server's count
  /// first, and the owner's last unlock releases whatever the server still counts.
  virtual void note_unknown(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                            std::int64_t sent_ns) = 0;
  /// An unlock failed: the hold leaves the watchdog (it ends with its lease); holds that remain are lost.
  virtual void unlock_failed(std::string_view name, std::int64_t owner, hold_field field) = 0;
  /// The owner's unlock released its last hold: the entry goes (the hold time is reported).
  virtual void hold_released(std::uint32_t hold_index) = 0;
  /// The server restarted the owner's hold at `lease_ms` from a request sent at `sent_ns` (set_lease,
  /// as multi_lock does to its members): a fixed lease's deadline on the client follows it. A hold the
  /// watchdog renews keeps its watchdog lease.
  virtual void lease_restarted(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                               std::int64_t sent_ns) = 0;

  // ---- state and resources
  /// Why a new operation may not start: the configuration's error, or shutting_down after shutdown().
  virtual std::error_code refusal() const = 0;
  /// shutdown() was called: running operations end at their next step.
  virtual bool shutting_down() const = 0;
  /// The connections are closed: nothing more can be sent.
  virtual bool closed() const = 0;
  virtual const op_settings& settings() const = 0;
  virtual const asio::any_io_executor& io_executor() const = 0;
  /// Keeps the client alive while a handler of one of its pooled operations is pending.
  virtual std::shared_ptr<const void> lifeline() const = 0;
  /// Every operation kind's recycled objects.
  virtual op_pools& pools() = 0;

 protected:
  ~op_context() = default;
};

/// The context the operations of `core` see: the entry points hand it to what they start.
op_context& context_of(client_core& core);

}  // namespace deadbolt::detail
