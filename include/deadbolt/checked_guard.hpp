// A scope guard for the blocking locks that reports what happened to the hold. std::lock_guard drops
// unlock's outcome, so a lease the client found lost (errc::lease_lost: the lock expired or was taken
// away while held, and another holder may have been inside too) goes unnoticed; and a build without
// exceptions cannot use std::lock_guard's throwing lock() at all. checked_guard never throws.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <system_error>
#include <type_traits>
#include <utility>

#include "deadbolt/blocking.hpp"
#include "deadbolt/blocking_multi_lock.hpp"

namespace deadbolt {

/// Holds a blocking lock for a scope: blocking_lock, blocking_fair_lock, blocking_read_lock,
/// blocking_write_lock (the halves of a blocking_read_write_lock), blocking_fenced_lock,
/// blocking_multi_lock or blocking_red_lock.
///
/// The guard reports into the std::error_code it is given, which must outlive it: first why it did not
/// get the lock (if it did not), then, when it releases the lock (release() or its destructor), the
/// release's outcome: empty, errc::lease_lost if the client found the lease lost while it was held, or
/// the unlock's error. Like the lock, it belongs to the thread that acquired it: release it there.
///
///   std::error_code ec;
///   {
///     deadbolt::checked_guard guard(lock, ec);  // waits as long as it takes
///     if (!guard) return ec;                     // not acquired: why
///     // ... critical section ...
///   }                                            // released: ec says how
///   if (ec == deadbolt::errc::lease_lost) { /* the work may have overlapped another holder's */ }
template <typename Lock>
class checked_guard {
 public:
  /// Waits as long as it takes. `lease` zero (the default): the watchdog keeps the lease.
  checked_guard(Lock& lock, std::error_code& ec, std::chrono::milliseconds lease = std::chrono::milliseconds(0))
      : lock_(&lock), ec_(&ec) {
    if constexpr (std::is_void_v<decltype(lock.lock(lease, ec))>) {
      lock.lock(lease, ec);
    } else {
      token_ = lock.lock(lease, ec);  // the fenced lock's token
    }
    held_ = !ec;
  }
  /// Waits up to `wait` (zero or negative: one attempt). Not held with `ec` empty: the wait ran out.
  checked_guard(Lock& lock, std::chrono::milliseconds wait, std::error_code& ec,
                std::chrono::milliseconds lease = std::chrono::milliseconds(0))
      : lock_(&lock), ec_(&ec) {
    held_ = took(lock.try_lock_for(wait, lease, ec)) && !ec;
  }
  /// Takes over a hold the calling thread already has.
  checked_guard(Lock& lock, std::adopt_lock_t, std::error_code& ec) noexcept : lock_(&lock), ec_(&ec), held_(true) {}

  checked_guard(checked_guard&& other) noexcept
      : lock_(other.lock_), ec_(other.ec_), held_(std::exchange(other.held_, false)), token_(other.token_) {}
  checked_guard(const checked_guard&) = delete;
  checked_guard& operator=(const checked_guard&) = delete;
  checked_guard& operator=(checked_guard&&) = delete;

  /// Releases the lock if the guard still holds it; the outcome goes to the guard's error code.
  ~checked_guard() { release(); }

  bool owns_lock() const noexcept { return held_; }
  explicit operator bool() const noexcept { return held_; }
  /// A blocking_fenced_lock's fencing token (0 when not held, and for the other kinds).
  std::uint64_t token() const noexcept { return token_; }
  /// How long the client still counts on the hold (the lock's valid_for(): docs/locks/reentrant_lock.md,
  /// "How long the hold is valid"); zero when the guard does not hold the lock, or its lease was lost.
  /// Work that must not outlive the hold checks it before each step.
  std::chrono::milliseconds valid_for() const { return held_ ? lock_->valid_for() : std::chrono::milliseconds(0); }

  /// Releases the lock now and returns the outcome, which also goes to the guard's error code. A
  /// guard that does not hold the lock (any more) returns an empty code and leaves that one as it is.
  std::error_code release() noexcept {
    if (!held_) return {};
    held_ = false;
    lock_->unlock(*ec_);  // a multi lock also returns each member's outcome; the first failure is enough
    return *ec_;
  }

 private:
  static bool took(bool acquired) noexcept { return acquired; }
  bool took(const std::optional<std::uint64_t>& token) noexcept {  // blocking_fenced_lock
    token_ = token.value_or(0);
    return token.has_value();
  }
  static bool took(std::chrono::milliseconds validity) noexcept { return validity.count() > 0; }  // red lock

  Lock* lock_;
  std::error_code* ec_;
  bool held_ = false;
  std::uint64_t token_ = 0;
};

}  // namespace deadbolt
