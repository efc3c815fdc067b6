// The blocking API: a client that runs its own event-loop thread, and lock objects that meet the
// standard TimedLockable requirements, so std::lock_guard, std::unique_lock and std::scoped_lock work.
// The owner id is the calling thread's id, so a lock is reentrant per thread, as Redisson's is in Java.
//
// Each blocking object wraps the async handle of the same kind (async_handle()) and every call is that
// handle's async operation, started from the calling thread, which then waits for it. Two cases fail
// at once instead (the error_code forms report, the others throw std::system_error):
//   - errc::would_deadlock: the call is made on the client's loop thread itself, i.e. from a
//     lease-lost handler (it would wait for itself);
//   - errc::shutting_down: the handle outlived its blocking_client.
// Timed waits (try_lock_for/until, try_acquire(_for), await_for) with a zero or negative wait make
// exactly one attempt, as std::timed_mutex does; only lock(), acquire() and await() wait without end.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/config.hpp"
#include "deadbolt/count_down_latch.hpp"
#include "deadbolt/detail/wait_ms.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/expirable_semaphore.hpp"
#include "deadbolt/fair_lock.hpp"
#include "deadbolt/inspect.hpp"
#include "deadbolt/read_write_lock.hpp"
#include "deadbolt/reentrant_lock.hpp"
#include "deadbolt/semaphore.hpp"

namespace deadbolt {

template <detail::lock_kind Kind>
class basic_blocking_lock;
/// A reentrant lock (Redisson RLock) used from threads.
using blocking_lock = basic_blocking_lock<detail::lock_kind::reentrant>;
/// A fair lock (Redisson RFairLock) used from threads.
using blocking_fair_lock = basic_blocking_lock<detail::lock_kind::fair>;
/// The read (shared) half of a read/write lock used from threads.
using blocking_read_lock = basic_blocking_lock<detail::lock_kind::read>;
/// The write (exclusive) half of a read/write lock used from threads.
using blocking_write_lock = basic_blocking_lock<detail::lock_kind::write>;
class blocking_fenced_lock;
class blocking_read_write_lock;
class blocking_semaphore;
class blocking_expirable_semaphore;
class blocking_count_down_latch;

class blocking_client {
 public:
  /// Starts the loop thread. Nothing is sent until the first operation (or connect()).
  explicit blocking_client(const config& cfg = {});
  /// Shuts the client down and joins its thread.
  ~blocking_client();
  blocking_client(const blocking_client&) = delete;
  blocking_client& operator=(const blocking_client&) = delete;

  std::error_code config_error() const;
  /// This client's UUID: the first half of every owner field it writes.
  const std::string& id() const;
  /// Waits until the command connection is up (bounded by config::command_timeout).
  std::error_code connect();

  /// What `name` is in Redis, read at one instant (see client::async_inspect and inspect.hpp).
  object_info inspect(std::string_view name);
  object_info inspect(std::string_view name, std::error_code& ec);

  /// A reentrant lock (Redisson RLock) named `name`.
  blocking_lock lock(std::string_view name);
  /// A fenced lock (Redisson RFencedLock) named `name`: the same lock, and every acquisition returns
  /// a fencing token.
  blocking_fenced_lock fenced_lock(std::string_view name);
  /// A fair lock (Redisson RFairLock) named `name`: granted in arrival order (see fair_lock.hpp).
  blocking_fair_lock fair_lock(std::string_view name);
  /// A read/write lock (Redisson RReadWriteLock) named `name`; std::shared_lock takes its reads.
  blocking_read_write_lock read_write_lock(std::string_view name);

  /// A semaphore (Redisson RSemaphore) named `name`.
  blocking_semaphore semaphore(std::string_view name);
  /// A permit-expirable semaphore (Redisson RPermitExpirableSemaphore) named `name`.
  blocking_expirable_semaphore expirable_semaphore(std::string_view name);
  /// A count-down latch (Redisson RCountDownLatch) named `name`.
  blocking_count_down_latch count_down_latch(std::string_view name);

  /// Called on the loop thread whenever a held lock's lease is found lost.
  void on_lease_lost(lease_lost_handler handler);

 private:
  struct loop;
  std::unique_ptr<loop> loop_;
};

namespace detail {

struct blocking_gate;  // src/blocking/blocking_gate.hpp

/// What every blocking object is: the async handle it wraps, and the gate onto its client's loop.
template <typename Async>
class blocking_handle {
 public:
  using async_type = Async;

  const std::string& name() const noexcept { return async_.name(); }
  /// The async handle this object wraps: the same object on the same client. Its operations take the
  /// owner explicitly (this object's use the calling thread's id) and must not be waited for on the
  /// client's loop thread. The blocking composites (blocking_multi_lock) are built from these.
  const Async& async_handle() const noexcept { return async_; }
  /// The gate every call of this object passes on its way to the client's loop: a blocking composite
  /// passes its members' gates.
  const std::shared_ptr<blocking_gate>& gate() const noexcept { return gate_; }

 protected:
  blocking_handle(Async async, std::shared_ptr<blocking_gate> gate)
      : async_(std::move(async)), gate_(std::move(gate)) {}

  Async async_;
  std::shared_ptr<blocking_gate> gate_;
};

/// What the blocking lock objects share: release and the queries, for the calling thread.
template <typename Async>
class blocking_lock_base : public blocking_handle<Async> {
 public:
  /// Releases one hold of the calling thread. Never throws.
  void unlock() noexcept;
  void unlock(std::error_code& ec) noexcept;

  /// Deletes the lock whoever holds it; true if there was one.
  bool force_unlock(std::error_code& ec);
  bool is_locked(std::error_code& ec);
  /// The server's hold count for the calling thread.
  std::int64_t hold_count(std::error_code& ec);
  /// True once the client found the calling thread's lease on this lock lost (renewal failed, or its
  /// deadline on the client passed without a renewal: see valid_for()).
  bool lease_lost();
  /// How long the client still counts on the calling thread's hold (lock_base::async_valid_for): zero
  /// when it holds none, or its lease was found lost.
  std::chrono::milliseconds valid_for();

 protected:
  using blocking_handle<Async>::blocking_handle;
};

/// The async handle a blocking lock of `Kind` wraps.
template <lock_kind Kind>
struct async_lock_of;
template <>
struct async_lock_of<lock_kind::reentrant> {
  using type = reentrant_lock;
};
template <>
struct async_lock_of<lock_kind::fair> {
  using type = deadbolt::fair_lock;
};
template <>
struct async_lock_of<lock_kind::read> {
  using type = read_lock;
};
template <>
struct async_lock_of<lock_kind::write> {
  using type = write_lock;
};

extern template class blocking_lock_base<reentrant_lock>;
extern template class blocking_lock_base<deadbolt::fair_lock>;
extern template class blocking_lock_base<read_lock>;
extern template class blocking_lock_base<write_lock>;
extern template class blocking_lock_base<deadbolt::fenced_lock>;

}  // namespace detail

/// A named lock of one kind used from threads (blocking_lock: reentrant; blocking_fair_lock,
/// blocking_read_lock, blocking_write_lock), wrapping that kind's async handle. Each kind is its own
/// type, so a composite such as blocking_multi_lock accepts only the kind it can lock correctly. Meets
/// TimedLockable: lock(), try_lock(), try_lock_for(), try_lock_until(), unlock().
///
/// Errors: the plain forms throw std::system_error (in builds without exceptions they end the process
/// through the port's fatal hook, as Asio does); the std::error_code& forms never do. unlock() never
/// throws: use unlock(std::error_code&) to see its outcome.
template <detail::lock_kind Kind>
class basic_blocking_lock : public detail::blocking_lock_base<typename detail::async_lock_of<Kind>::type> {
  using async_lock = typename detail::async_lock_of<Kind>::type;

 public:
  /// Waits as long as it takes. `lease` zero (the default) means the watchdog keeps the lease.
  void lock(std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  void lock(std::chrono::milliseconds lease, std::error_code& ec);
  void lock(std::error_code& ec) { lock(std::chrono::milliseconds(0), ec); }

  /// One attempt, no waiting.
  bool try_lock();
  bool try_lock(std::error_code& ec) { return try_acquire(0, 0, ec); }

  /// A zero or negative wait is one attempt (std::timed_mutex's rule).
  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_or_throw(detail::wait_ms(wait));
  }
  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait, std::chrono::milliseconds lease,
                    std::error_code& ec) {
    return try_acquire(detail::wait_ms(wait), lease.count(), ec);
  }
  template <typename Clock, typename Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_for(deadline - Clock::now());
  }

 private:
  friend class blocking_client;
  friend class blocking_read_write_lock;
  basic_blocking_lock(async_lock async, std::shared_ptr<detail::blocking_gate> gate)
      : detail::blocking_lock_base<async_lock>(std::move(async), std::move(gate)) {}
  bool try_acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec);
  bool try_acquire_or_throw(std::int64_t wait_ms);
};

extern template class basic_blocking_lock<detail::lock_kind::reentrant>;
extern template class basic_blocking_lock<detail::lock_kind::fair>;
extern template class basic_blocking_lock<detail::lock_kind::read>;
extern template class basic_blocking_lock<detail::lock_kind::write>;

/// A named fenced lock used from threads (wrapping a fenced_lock): blocking_lock, but every
/// acquisition (reentrant ones too) returns a fencing token, a number that strictly increases across
/// all clients (Java ones included). try_lock* return the token, or an empty optional if the lock was
/// not acquired.
///
/// std::lock_guard and std::unique_lock's constructors work on it (lock() ignores its result, an
/// optional converts to bool in their conditions). Errors as blocking_lock: the plain forms throw,
/// the std::error_code& forms never do, unlock() never throws.
class blocking_fenced_lock : public detail::blocking_lock_base<deadbolt::fenced_lock> {
 public:
  /// Waits as long as it takes and returns the token. `lease` zero means the watchdog.
  std::uint64_t lock(std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  std::uint64_t lock(std::chrono::milliseconds lease, std::error_code& ec);
  std::uint64_t lock(std::error_code& ec) { return lock(std::chrono::milliseconds(0), ec); }

  /// One attempt, no waiting: the token if acquired.
  std::optional<std::uint64_t> try_lock();
  std::optional<std::uint64_t> try_lock(std::error_code& ec) { return try_acquire(0, 0, ec); }

  template <typename Rep, typename Period>
  std::optional<std::uint64_t> try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_or_throw(detail::wait_ms(wait));
  }
  template <typename Rep, typename Period>
  std::optional<std::uint64_t> try_lock_for(const std::chrono::duration<Rep, Period>& wait,
                                            std::chrono::milliseconds lease, std::error_code& ec) {
    return try_acquire(detail::wait_ms(wait), lease.count(), ec);
  }
  template <typename Clock, typename Duration>
  std::optional<std::uint64_t> try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return try_lock_for(deadline - Clock::now());
  }

  /// The last token handed out (0 if none yet).
  std::uint64_t token(std::error_code& ec);

 private:
  friend class blocking_client;
  blocking_fenced_lock(deadbolt::fenced_lock async, std::shared_ptr<detail::blocking_gate> gate)
      : blocking_lock_base(std::move(async), std::move(gate)) {}
  std::optional<std::uint64_t> try_acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec);
  std::optional<std::uint64_t> try_acquire_or_throw(std::int64_t wait_ms);
};

/// A named read/write lock used from threads. Meets SharedTimedLockable: the exclusive side (lock,
/// try_lock, try_lock_for, try_lock_until, unlock) is the write lock and the shared side (lock_shared,
/// try_lock_shared, ..., unlock_shared) the read lock, so std::unique_lock and std::shared_lock work.
/// read() and write() give each half with its error_code forms and queries. Errors as blocking_lock.
class blocking_read_write_lock {
 public:
  blocking_read_lock& read() noexcept { return read_; }
  blocking_write_lock& write() noexcept { return write_; }
  const std::string& name() const noexcept { return read_.name(); }

  void lock() { write_.lock(); }
  bool try_lock() { return write_.try_lock(); }
  template <typename Rep, typename Period>
  bool try_lock_for(const std::chrono::duration<Rep, Period>& wait) {
    return write_.try_lock_for(wait);
  }
  template <typename Clock, typename Duration>
  bool try_lock_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return write_.try_lock_until(deadline);
  }
  void unlock() noexcept { write_.unlock(); }

  void lock_shared() { read_.lock(); }
  bool try_lock_shared() { return read_.try_lock(); }
  template <typename Rep, typename Period>
  bool try_lock_shared_for(const std::chrono::duration<Rep, Period>& wait) {
    return read_.try_lock_for(wait);
  }
  template <typename Clock, typename Duration>
  bool try_lock_shared_until(const std::chrono::time_point<Clock, Duration>& deadline) {
    return read_.try_lock_until(deadline);
  }
  void unlock_shared() noexcept { read_.unlock(); }

 private:
  friend class blocking_client;
  blocking_read_write_lock(deadbolt::read_write_lock async, const std::shared_ptr<detail::blocking_gate>& gate)
      : read_(async.read(), gate), write_(async.write(), gate) {}

  blocking_read_lock read_;
  blocking_write_lock write_;
};

/// A named semaphore used from threads (wrapping a semaphore; Redisson RSemaphore, see
/// semaphore.hpp). Errors: the plain forms throw std::system_error (without exceptions: the port's
/// fatal hook), the std::error_code& forms never do.
class blocking_semaphore : public detail::blocking_handle<deadbolt::semaphore> {
 public:
  /// Takes `permits`, waiting as long as it takes.
  void acquire(std::int64_t permits = 1);
  void acquire(std::int64_t permits, std::error_code& ec);
  /// One attempt, no waiting.
  bool try_acquire(std::int64_t permits = 1);
  /// Waits up to `wait` (zero or negative: one attempt).
  bool try_acquire(std::int64_t permits, std::chrono::milliseconds wait, std::error_code& ec);
  template <typename Rep, typename Period>
  bool try_acquire_for(std::int64_t permits, const std::chrono::duration<Rep, Period>& wait) {
    return try_acquire_or_throw(permits, detail::wait_ms(wait));
  }
  /// Gives `permits` back (no owner: anyone may release).
  void release(std::int64_t permits = 1);
  void release(std::int64_t permits, std::error_code& ec);
  /// Sets the permits if the semaphore does not exist yet; true if it did not.
  bool try_set_permits(std::int64_t permits, std::error_code& ec);
  /// Adds (negative: removes) permits; returns the new available count.
  std::int64_t add_permits(std::int64_t permits, std::error_code& ec);
  /// Takes every available permit; returns how many.
  std::int64_t drain_permits(std::error_code& ec);
  std::int64_t available_permits(std::error_code& ec);

 private:
  friend class blocking_client;
  using blocking_handle::blocking_handle;
  bool try_acquire_or_throw(std::int64_t permits, std::int64_t wait_ms);
};

/// A named permit-expirable semaphore used from threads (wrapping an expirable_semaphore; Redisson
/// RPermitExpirableSemaphore, see expirable_semaphore.hpp): each acquire takes one permit, held for
/// `lease` (zero: no expiry), and returns its id. Errors as blocking_semaphore.
class blocking_expirable_semaphore : public detail::blocking_handle<deadbolt::expirable_semaphore> {
 public:
  permit_id acquire(std::chrono::milliseconds lease = std::chrono::milliseconds(0));
  permit_id acquire(std::chrono::milliseconds lease, std::error_code& ec);
  /// Waits up to `wait` (zero or negative: one attempt); empty if none was free.
  std::optional<permit_id> try_acquire(std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                                       std::error_code& ec);
  /// errc::no_such_permit if `id` is not held (unknown, released, or expired).
  void release(const permit_id& id);
  void release(const permit_id& id, std::error_code& ec);
  /// False if `id` was not held.
  bool try_release(const permit_id& id, std::error_code& ec);
  /// Restarts the lease at `lease` from now; false if `id` is not held any more.
  bool update_lease(const permit_id& id, std::chrono::milliseconds lease, std::error_code& ec);
  bool try_set_permits(std::int64_t permits, std::error_code& ec);
  std::int64_t add_permits(std::int64_t permits, std::error_code& ec);
  /// Reclaims expired permits, then counts.
  std::int64_t available_permits(std::error_code& ec);

 private:
  friend class blocking_client;
  using blocking_handle::blocking_handle;
};

/// A named count-down latch used from threads (wrapping a count_down_latch; Redisson RCountDownLatch,
/// see count_down_latch.hpp). Errors as blocking_semaphore.
class blocking_count_down_latch : public detail::blocking_handle<deadbolt::count_down_latch> {
 public:
  /// Sets the count if the latch does not exist; true if it did not.
  bool try_set_count(std::int64_t count_value, std::error_code& ec);
  /// Returns the new count (0 or less: the latch is released and deleted).
  std::int64_t count_down();
  std::int64_t count_down(std::error_code& ec);
  /// The count (0 if the latch does not exist).
  std::int64_t count(std::error_code& ec);
  /// Waits until the count is zero, as long as it takes.
  void await();
  void await(std::error_code& ec);
  /// Waits up to `wait` (zero or negative: one look); true if the count reached zero.
  template <typename Rep, typename Period>
  bool await_for(const std::chrono::duration<Rep, Period>& wait) {
    return await_or_throw(detail::wait_ms(wait));
  }
  bool await_for(std::chrono::milliseconds wait, std::error_code& ec);
  /// Deletes the latch (its awaiters are released); true if it existed.
  bool delete_latch(std::error_code& ec);

 private:
  friend class blocking_client;
  using blocking_handle::blocking_handle;
  bool await_or_throw(std::int64_t wait_ms);
};

}  // namespace deadbolt
