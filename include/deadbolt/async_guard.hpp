// A guard for C++20 coroutines (asio::awaitable): holds an async lock for a scope and releases it
// through the async API. The library is C++17: this header is empty unless Asio enables co_await
// (C++20 with coroutines) and exceptions are on (asio::awaitable needs them).
#pragma once

#include "deadbolt/port/asio_config.hpp"

#include <asio/detail/config.hpp>

#if defined(ASIO_HAS_CO_AWAIT) && !defined(ASIO_NO_EXCEPTIONS)

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include <asio/awaitable.hpp>
#include <asio/redirect_error.hpp>
#include <asio/use_awaitable.hpp>

#include "deadbolt/owner_id.hpp"

namespace deadbolt {

template <typename Lock>
class async_guard;

/// Waits as long as it takes for `lock` (a handle: cheap to copy) on behalf of `owner`; `lease` zero
/// (the default) means the watchdog keeps the lease. The guard is empty if the wait failed (error()).
template <typename Lock>
asio::awaitable<async_guard<Lock>> async_lock_guard(Lock lock, owner_id owner,
                                                    std::chrono::milliseconds lease = std::chrono::milliseconds(0));

/// Waits up to `wait` (zero: one attempt; negative: as long as it takes) for `lock`. The guard is empty
/// if the wait ran out (error() empty) or failed.
template <typename Lock>
asio::awaitable<async_guard<Lock>> async_try_lock_guard(Lock lock, owner_id owner, std::chrono::milliseconds wait,
                                                        std::chrono::milliseconds lease = std::chrono::milliseconds(0));

/// One owner's hold of an async lock (reentrant_lock, fenced_lock, spin_lock, fair_lock, read_lock,
/// write_lock, multi_lock or red_lock), made by async_lock_guard() or async_try_lock_guard().
///
/// Release it with `co_await guard.async_release()`, which answers the unlock's outcome (empty,
/// errc::lease_lost if the client found the lease lost while it was held, or the unlock's error). A
/// guard still holding the lock when it is destroyed (the coroutine returned early or threw) starts
/// the unlock itself: a destructor cannot co_await, so that outcome goes to the on_release() handler,
/// on the lock's executor.
///
///   auto guard = co_await deadbolt::async_lock_guard(client.lock("orders"), owner);
///   if (!guard) co_return;                                   // guard.error() says why
///   // ... critical section ...
///   std::error_code ec = co_await guard.async_release();     // lease_lost: tell someone
template <typename Lock>
class async_guard {
 public:
  async_guard(async_guard&& other) noexcept
      : lock_(std::move(other.lock_)),
        owner_(other.owner_),
        held_(std::exchange(other.held_, false)),
        error_(other.error_),
        token_(other.token_),
        on_release_(std::move(other.on_release_)) {}
  async_guard(const async_guard&) = delete;
  async_guard& operator=(const async_guard&) = delete;
  async_guard& operator=(async_guard&&) = delete;

  /// Still held: starts the unlock; its outcome goes to the on_release() handler (if any).
  ~async_guard() {
    if (!held_) return;
    lock_.async_unlock(owner_, [handler = std::move(on_release_)](std::error_code ec, auto&&...) {
      if (handler) handler(ec);
    });
  }

  bool owns_lock() const noexcept { return held_; }
  explicit operator bool() const noexcept { return held_; }
  /// Why the lock was not acquired (empty: the wait ran out, or it was acquired).
  std::error_code error() const noexcept { return error_; }
  /// A fenced_lock's fencing token (0 when not held, and for the other kinds).
  std::uint64_t token() const noexcept { return token_; }
  owner_id owner() const noexcept { return owner_; }
  Lock& lock() noexcept { return lock_; }

  /// Releases the lock now. A guard that does not hold it (any more) answers an empty code.
  asio::awaitable<std::error_code> async_release() {
    std::error_code ec;
    if (!held_) co_return ec;
    held_ = false;
    co_await lock_.async_unlock(owner_, asio::redirect_error(asio::use_awaitable, ec));
    co_return ec;
  }

  /// Where the destructor's unlock reports its outcome, on the lock's executor. It must not block.
  void on_release(std::function<void(std::error_code)> handler) { on_release_ = std::move(handler); }

 private:
  template <typename L>
  friend asio::awaitable<async_guard<L>> async_lock_guard(L, owner_id, std::chrono::milliseconds);
  template <typename L>
  friend asio::awaitable<async_guard<L>> async_try_lock_guard(L, owner_id, std::chrono::milliseconds,
                                                              std::chrono::milliseconds);

  async_guard(Lock lock, owner_id owner) : lock_(std::move(lock)), owner_(owner) {}

  void took(std::error_code ec) noexcept {
    error_ = ec;
    held_ = !ec;
  }
  void took(std::error_code ec, bool acquired) noexcept {
    error_ = ec;
    held_ = !ec && acquired;
  }
  void took(std::error_code ec, std::optional<std::uint64_t> token) noexcept {  // fenced_lock
    took(ec, token.has_value());
    token_ = held_ ? *token : 0;
  }
  void took(std::error_code ec, std::chrono::milliseconds validity) noexcept {  // red_lock
    took(ec, validity.count() > 0);
  }

  Lock lock_;
  owner_id owner_;
  bool held_ = false;
  std::error_code error_;
  std::uint64_t token_ = 0;
  std::function<void(std::error_code)> on_release_;
};

template <typename Lock>
asio::awaitable<async_guard<Lock>> async_lock_guard(Lock lock, owner_id owner, std::chrono::milliseconds lease) {
  async_guard<Lock> guard(std::move(lock), owner);
  std::error_code ec;
  auto acquire = guard.lock_.async_lock(owner, lease, asio::redirect_error(asio::use_awaitable, ec));
  if constexpr (std::is_void_v<typename decltype(acquire)::value_type>) {
    co_await std::move(acquire);
    guard.took(ec);
  } else {
    const std::uint64_t token = co_await std::move(acquire);  // the fenced lock's
    guard.took(ec, ec ? std::nullopt : std::optional<std::uint64_t>(token));
  }
  co_return guard;
}

template <typename Lock>
asio::awaitable<async_guard<Lock>> async_try_lock_guard(Lock lock, owner_id owner, std::chrono::milliseconds wait,
                                                        std::chrono::milliseconds lease) {
  async_guard<Lock> guard(std::move(lock), owner);
  std::error_code ec;
  auto result = co_await guard.lock_.async_try_lock(owner, wait, lease, asio::redirect_error(asio::use_awaitable, ec));
  guard.took(ec, result);
  co_return guard;
}

}  // namespace deadbolt

#endif
