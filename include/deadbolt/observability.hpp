// Hooks for logs and metrics, set through config::log and config::metrics. Unset (the default) they
// cost one branch where an event happens; set, they are called on the client's executor (the loop
// thread of a blocking_client) and must not block. See docs/observability.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>
#include <string_view>
#include <system_error>

namespace deadbolt {

enum class log_level { debug, info, warning, error };

/// "debug", "info", "warning" or "error".
const char* to_string(log_level level) noexcept;

/// Called with each message at or above config::log_threshold: connections made, lost and failing,
/// leases lost, full tables. The message is only valid during the call.
using log_hook = std::function<void(log_level level, std::string_view message)>;

/// A client's two kinds of connection: requests go over the command connection(s) (one per node on a
/// cluster), waiters share a subscriber connection.
enum class connection_role { command, subscriber };

/// "command" or "subscriber".
const char* to_string(connection_role role) noexcept;

/// The fixed-capacity tables a client sets up from its config: a full one is an error code.
enum class table_kind {
  waiters,     ///< callers parked waiting for a lock, permit or latch (config::max_waiters)
  channels,    ///< pub/sub channels subscribed at once (config::max_channels)
  held_locks,  ///< locks held at once (config::max_held_locks)
};

/// "waiters", "channels" or "held_locks".
const char* to_string(table_kind table) noexcept;

/// How one lock acquisition ended (every lock kind; the members of a multi or red lock each count).
struct acquire_sample {
  std::string_view name;             ///< the lock's name, valid during the call
  std::chrono::nanoseconds waited{};  ///< from the call to its completion, round trips included
  bool acquired = false;             ///< false: the wait ran out, failed, or was cancelled
  std::error_code error;             ///< why it failed (operation_aborted: cancelled); empty otherwise
};

/// Receives a client's metrics. Override what you count; every default does nothing. Called on the
/// client's executor, so a hook that only one client uses needs no locking; one shared by several
/// clients (or read from other threads, as a metrics endpoint does) needs atomics or a mutex. No call
/// may block. One that throws is contained: the exception is logged through config::log and the
/// client goes on (docs/threads.md).
class metrics_hook {
 public:
  virtual ~metrics_hook() = default;

  /// A lock acquisition ended (wait time; contended acquires wait longer than a round trip).
  virtual void on_acquire(const acquire_sample& /*sample*/) {}
  /// The owner's last hold of `name` was released by its unlock, `held` after it was first acquired.
  virtual void on_release(std::string_view /*name*/, std::chrono::nanoseconds /*held*/) {}
  /// The watchdog renewed `holds` leases in one batch (one script call).
  virtual void on_renewal(std::size_t /*holds*/) {}
  /// A renewal batch of `holds` leases got no answer, or the server refused it (`error`: what its
  /// error reply means; the warning log line has the server's text); the next run retries, and a
  /// lease not confirmed for a whole watchdog_timeout is then declared lost.
  virtual void on_renewal_failure(std::size_t /*holds*/, std::error_code /*error*/) {}
  /// A held lock's lease was found lost (the client's lease-lost handler is called too).
  virtual void on_lease_lost(std::string_view /*name*/) {}
  /// A connection that had been up came up again after it was lost.
  virtual void on_reconnect(connection_role /*role*/) {}
  /// A connection that was up was lost (`error` says why); it reconnects on its own.
  virtual void on_disconnect(connection_role /*role*/, std::error_code /*error*/) {}
  /// The waiter or channel table's use changed: `used` of `capacity` entries (per subscriber
  /// connection; a cluster client has one per node it subscribes on).
  virtual void on_table_use(table_kind /*table*/, std::size_t /*used*/, std::size_t /*capacity*/) {}
  /// An operation failed because `table` was full (errc::waiter_table_full, channel_table_full,
  /// held_table_full).
  virtual void on_table_full(table_kind /*table*/) {}
};

}  // namespace deadbolt
