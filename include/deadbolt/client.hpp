// The asynchronous client: one executor runs everything (the command connection, the subscriber
// connection shared by all waiters, the watchdog timer). Run its io_context on one thread.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/port/asio_config.hpp"

#include <asio/post.hpp>

#include "deadbolt/config.hpp"
#include "deadbolt/count_down_latch.hpp"
#include "deadbolt/detail/async.hpp"
#include "deadbolt/detail/engine.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/expirable_semaphore.hpp"
#include "deadbolt/fair_lock.hpp"
#include "deadbolt/inspect.hpp"
#include "deadbolt/read_write_lock.hpp"
#include "deadbolt/reentrant_lock.hpp"
#include "deadbolt/reply.hpp"
#include "deadbolt/semaphore.hpp"

namespace deadbolt {

class blocking_client;

class client {
 public:
  using executor_type = asio::any_io_executor;

  /// Builds the client; nothing is sent until the first operation (or async_connect). A bad config
  /// is reported by config_error() and by every operation.
  client(executor_type ex, const config& cfg = {})
      : executor_(std::move(ex)), core_(detail::make_client_core(executor_, cfg)) {}
  /// Shuts the client down, as shutdown(). Posted, even on the client's executor: destroyed from inside
  /// a handler deadbolt called, the engine (whose last owner this may be) outlives that call.
  ~client() {
    if (core_) asio::post(executor_, [core = std::move(core_)] { detail::shutdown(*core); });
  }
  client(const client&) = delete;
  client& operator=(const client&) = delete;

  executor_type get_executor() const noexcept { return executor_; }
  std::error_code config_error() const { return detail::config_error(*core_); }
  /// This client's UUID: the first half of every owner field it writes.
  const std::string& id() const { return detail::client_id(*core_); }

  /// Completes once the command connection is up (or fails after config::connect_timeout).
  /// Signature: void(std::error_code).
  template <typename Token>
  auto async_connect(Token&& token) {
    return detail::async_run<detail::result_void>(core_, executor_, std::forward<Token>(token),
                                                  [](auto& core, auto& c) { return detail::start_connect(core, c); });
  }

  /// Sends any command on the command connection, e.g. {"HGETALL", "orders"}: for inspection and
  /// tools, not for lock state (use the lock objects, whose scripts keep it consistent).
  /// Signature: void(std::error_code, deadbolt::reply).
  template <typename Token>
  auto async_command(std::vector<std::string> args, Token&& token) {
    return detail::async_run<detail::result_reply>(
        core_, executor_, std::forward<Token>(token),
        [args = std::move(args)](auto& core, auto& c) mutable { return detail::start_command(core, std::move(args), c); });
  }

  /// What `name` is in Redis: the kind of lock, semaphore or latch, its holders with their hold
  /// counts, TTL, a fair lock's queue, a semaphore's permits, the fencing token (see inspect.hpp). All
  /// of the name's keys are read by one script, at one instant; nothing is changed.
  /// Signature: void(std::error_code, deadbolt::object_info).
  template <typename Token>
  auto async_inspect(std::string_view name, Token&& token) {
    return detail::async_run<detail::result_object_info>(
        core_, executor_, std::forward<Token>(token),
        [name = std::string(name)](auto& core, auto& c) { return detail::start_inspect(core, name, c); });
  }

  /// A reentrant lock (Redisson RLock) named `name`.
  reentrant_lock lock(std::string_view name) const { return reentrant_lock(core_, executor_, name); }
  /// A fenced lock (Redisson RFencedLock) named `name`: the same lock, plus fencing tokens.
  deadbolt::fenced_lock fenced_lock(std::string_view name) const {
    return deadbolt::fenced_lock(core_, executor_, name);
  }

  /// A spin lock (Redisson RSpinLock) named `name`: the same lock data, no pub/sub; waiters back off
  /// per `backoff` (default: exponential, 1 ms to 128 ms).
  deadbolt::spin_lock spin_lock(std::string_view name, const spin_backoff& backoff = {}) const {
    return deadbolt::spin_lock(core_, executor_, name, backoff);
  }

  /// A fair lock (Redisson RFairLock) named `name`: granted in arrival order.
  deadbolt::fair_lock fair_lock(std::string_view name) const { return deadbolt::fair_lock(core_, executor_, name); }

  /// A read/write lock (Redisson RReadWriteLock) named `name`: read() and write() are its halves.
  deadbolt::read_write_lock read_write_lock(std::string_view name) const {
    return deadbolt::read_write_lock(core_, executor_, name);
  }

  /// A semaphore (Redisson RSemaphore) named `name`.
  deadbolt::semaphore semaphore(std::string_view name) const { return deadbolt::semaphore(core_, executor_, name); }
  /// A permit-expirable semaphore (Redisson RPermitExpirableSemaphore) named `name`.
  deadbolt::expirable_semaphore expirable_semaphore(std::string_view name) const {
    return deadbolt::expirable_semaphore(core_, executor_, name);
  }
  /// A count-down latch (Redisson RCountDownLatch) named `name`.
  deadbolt::count_down_latch count_down_latch(std::string_view name) const {
    return deadbolt::count_down_latch(core_, executor_, name);
  }

  /// Shuts the client down (the destructor does too): no new operation starts, and running ones
  /// complete with errc::shutting_down (a waiting fair-lock owner leaves the queue first). What was
  /// already decided is still sent before the connections close: unlocks called before shutdown(),
  /// the release of a lock an acquire got after it was cancelled, a semaphore permit given back,
  /// leaving a fair queue; for at most config::command_timeout, and only while the server answers.
  /// Locks still held are not released: they end with their lease (the watchdog stops). Lets an
  /// io_context whose only work is this client return from run() once that is done.
  void shutdown() {
    asio::dispatch(executor_, [core = core_] { detail::shutdown(*core); });
  }

  /// Called on the client's executor whenever a held lock's lease is found lost: renewal found the
  /// lock gone, or the server could not be reached for a whole lease. The handler may call the client
  /// (shutdown() too) and may throw: the exception is logged through config::log (docs/threads.md).
  void on_lease_lost(lease_lost_handler handler) {
    // Posted: called from inside the handler, the new one takes over once the running one returns.
    asio::post(executor_, [core = core_, h = std::move(handler)]() mutable {
      detail::set_lease_lost_handler(*core, std::move(h));
    });
  }

 private:
  friend class blocking_client;  // runs one of these on its own thread
  /// A client whose engine keeps `keep_alive` (the blocking client's io_context) as long as any
  /// handle lives: their timers and strands belong to it.
  client(executor_type ex, const config& cfg, std::shared_ptr<void> keep_alive)
      : executor_(std::move(ex)), core_(detail::make_client_core(executor_, cfg, std::move(keep_alive))) {}

  executor_type executor_;
  std::shared_ptr<detail::client_core> core_;
};

}  // namespace deadbolt
