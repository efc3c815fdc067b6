// Redisson's reentrant lock (RLock), wire-compatible: the same key, hash fields, channel and scripts,
// so C++ and Java processes can contend for one lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "deadbolt/detail/async.hpp"
#include "deadbolt/detail/engine.hpp"

namespace deadbolt {

/// Identifies who holds a lock within this client: the second half of the Redis hash field
/// "<client uuid>:<owner id>". Redisson uses the Java thread id; async code passes its own.
using owner_id = std::int64_t;

/// A handle to one named lock. Cheap to copy; every copy talks to the same client. All operations
/// take Asio completion tokens (callbacks, asio::use_future, asio::use_awaitable, ...) and support
/// per-operation cancellation of their wait.
///
/// Leases: an operation given a lease holds the lock for exactly that long unless unlocked. Without a
/// lease (or with a zero lease) the lock uses config::watchdog_timeout and the client's watchdog
/// renews it every third of that until unlock; if renewal finds the lock gone, the client's lease-lost
/// handler is told.
class reentrant_lock {
 public:
  using executor_type = asio::any_io_executor;

  reentrant_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : core_(std::move(core)), executor_(std::move(ex)), names_(detail::make_lock_names(name)) {}

  const std::string& name() const noexcept { return names_->name; }
  executor_type get_executor() const noexcept { return executor_; }

  /// Waits as long as it takes. Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, Token&& token) {
    return async_lock(owner, std::chrono::milliseconds(0), std::forward<Token>(token));
  }
  /// Waits as long as it takes; holds for `lease` (zero: watchdog). Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return run<detail::result_void>(std::forward<Token>(token), [names = names_, owner, lease](auto& core, auto& c) {
      return detail::start_acquire(core, names, owner, -1, lease.count(), c);
    });
  }
  /// One attempt, no waiting. Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_lock(owner_id owner, Token&& token) {
    return async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::milliseconds(0),
                          std::forward<Token>(token));
  }
  /// Waits up to `wait`; holds for `lease` (zero: watchdog). Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_lock(owner_id owner, std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                      Token&& token) {
    return run<detail::result_bool>(std::forward<Token>(token), [names = names_, owner, wait, lease](auto& core, auto& c) {
      return detail::start_acquire(core, names, owner, wait.count() < 0 ? 0 : wait.count(), lease.count(), c);
    });
  }
  /// Releases one hold. errc::not_owner if `owner` holds none. Signature: void(std::error_code).
  template <typename Token>
  auto async_unlock(owner_id owner, Token&& token) {
    return run<detail::result_void>(std::forward<Token>(token), [names = names_, owner](auto& core, auto& c) {
      return detail::start_unlock(core, names, owner, c);
    });
  }
  /// Deletes the lock whoever holds it and wakes a waiter. Signature: void(std::error_code, bool deleted).
  template <typename Token>
  auto async_force_unlock(Token&& token) {
    return query<detail::result_bool>(detail::lock_query::force_unlock, 0, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_is_locked(Token&& token) {
    return query<detail::result_bool>(detail::lock_query::is_locked, 0, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_is_held_by(owner_id owner, Token&& token) {
    return query<detail::result_bool>(detail::lock_query::is_held_by, owner, std::forward<Token>(token));
  }
  /// The server's hold count for `owner` (0 if none). Signature: void(std::error_code, std::int64_t).
  template <typename Token>
  auto async_hold_count(owner_id owner, Token&& token) {
    return query<detail::result_int>(detail::lock_query::hold_count, owner, std::forward<Token>(token));
  }
  /// The lock's remaining TTL: -2 ms if it is not locked, -1 ms if it has no TTL.
  /// Signature: void(std::error_code, std::chrono::milliseconds).
  template <typename Token>
  auto async_remaining_ttl(Token&& token) {
    return query<detail::result_ms>(detail::lock_query::remaining_ttl, 0, std::forward<Token>(token));
  }
  /// Whether this client holds the lock for `owner` and has found its lease lost (answered locally).
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_lease_lost(owner_id owner, Token&& token) {
    return query<detail::result_bool>(detail::lock_query::lease_lost, owner, std::forward<Token>(token));
  }

 private:
  template <typename Result, typename Token, typename Start>
  auto run(Token&& token, Start&& start) {
    return detail::async_run<Result>(core_, executor_, std::forward<Token>(token), std::forward<Start>(start));
  }
  template <typename Result, typename Token>
  auto query(detail::lock_query q, owner_id owner, Token&& token) {
    return run<Result>(std::forward<Token>(token), [names = names_, q, owner](auto& core, auto& c) {
      return detail::start_query(core, names, q, owner, c);
    });
  }

  std::shared_ptr<detail::client_core> core_;
  executor_type executor_;
  std::shared_ptr<const detail::lock_names> names_;
};

}  // namespace deadbolt
