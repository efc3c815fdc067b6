// The blocking multi lock and red lock: deadbolt::multi_lock and deadbolt::red_lock over the async
// handles of blocking_lock members (possibly of different blocking_clients), meeting TimedLockable so
// std::lock_guard, std::unique_lock and std::scoped_lock work. The owner is the calling thread. Only
// reentrant members: a blocking_fair_lock or a read/write half is another type, which the
// composites do not take (they would lock it with the reentrant script).
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/blocking.hpp"
#include "deadbolt/detail/wait_ms.hpp"
#include "deadbolt/multi_lock.hpp"

namespace deadbolt {

namespace detail {

/// What both blocking composites share: the async composite they wrap (multi_lock or red_lock, built
/// from the members' async handles) and the gates of the members' clients. Errors as blocking_lock:
/// the plain forms throw std::system_error (without exceptions: the port's fatal hook), the
/// std::error_code& forms never do.
template <typename AsyncMulti>
class blocking_multi_base {
 public:
  std::size_t size() const noexcept { return async_.size(); }

  /// Loops until acquired (see multi_lock::async_lock). `lease` zero: the members' watchdogs.
  void lock(std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  void lock(std::chrono::milliseconds lease, std::error_code& ec);
  void lock(std::error_code& ec) { lock(std::chrono::milliseconds(0), ec); }

  /// One attempt per member, no waiting.
  bool try_lock();
  bool try_lock(std::error_code& ec) { return acquire(0, 0, ec) > 0; }

  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_or_throw(detail::wait_ms(wait));
  }
  template <typename Clock, typename Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_for(deadline - Clock::now());
  }

  /// Releases every member. Never throws.
  void unlock() noexcept;
  /// Returns each member's outcome; `ec` as the async_unlock's first code.
  std::vector<std::error_code> unlock(std::error_code& ec) noexcept;
  /// How long the client still counts on the calling thread's hold of the composite
  /// (multi_lock::async_valid_for): zero when it holds none, or too few members are valid.
  std::chrono::milliseconds valid_for();

 protected:
  explicit blocking_multi_base(std::vector<blocking_lock> locks);
  /// One try (wait_ms 0: one attempt per member): 0 if not acquired, else 1 or the validity in ms.
  std::int64_t acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec);
  bool try_acquire_or_throw(std::int64_t wait_ms);

  AsyncMulti async_;

 private:
  std::vector<std::shared_ptr<blocking_gate>> gates_;  // one per client, in address order
  std::vector<blocking_gate*> gate_list_;              // the same, for the blocking token
};

extern template class blocking_multi_base<multi_lock>;
extern template class blocking_multi_base<red_lock>;

}  // namespace detail

/// All of the members or none; see multi_lock.
class blocking_multi_lock : public detail::blocking_multi_base<multi_lock> {
 public:
  explicit blocking_multi_lock(std::vector<blocking_lock> locks) : blocking_multi_base(std::move(locks)) {}

  using blocking_multi_base::try_lock_for;
  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::chrono::milliseconds lease,
                    std::error_code& ec) {
    return acquire(detail::wait_ms(wait), lease.count(), ec) > 0;
  }
};

/// A majority of the members (Redlock); see red_lock and docs/locks/red_lock.md.
class blocking_red_lock : public detail::blocking_multi_base<red_lock> {
 public:
  explicit blocking_red_lock(std::vector<blocking_lock> locks) : blocking_multi_base(std::move(locks)) {}

  std::size_t quorum() const noexcept { return size() / 2 + 1; }

  using blocking_multi_base::try_lock_for;
  /// The validity (lease - time taken - drift) if acquired, zero if not.
  template <typename Rep, typename Period>
  std::chrono::milliseconds try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                                         std::chrono::milliseconds lease, std::error_code& ec) {
    return std::chrono::milliseconds(acquire(detail::wait_ms(wait), lease.count(), ec));
  }
};

}  // namespace deadbolt
