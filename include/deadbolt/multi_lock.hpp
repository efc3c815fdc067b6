// Redisson's RedissonMultiLock and RedissonRedLock (docs/protocol.md §7): client-side compositions of
// reentrant locks that may live on different clients, servers and executors. Nothing about the
// composite is stored in Redis; each member is an ordinary reentrant_lock (same keys and scripts).
//
//   multi_lock  all of the members, or none.
//   red_lock    a majority (n/2 + 1) of the members, which should be on independent servers
//               (the Redlock algorithm). Weaker than a fenced lock: see docs/locks/red_lock.md.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "deadbolt/detail/async.hpp"
#include "deadbolt/detail/block_cache.hpp"
#include "deadbolt/port/asio_config.hpp"
#include "deadbolt/reentrant_lock.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_signal.hpp>
#include <asio/dispatch.hpp>
#include <asio/system_executor.hpp>

namespace deadbolt {

namespace detail {

class multi_core;
enum class multi_kind { all, quorum };

/// How a composite acquisition ends: value 0 not acquired; acquired: 1 (multi lock) or the validity
/// in ms (red lock). Completed once, on the composite's strand.
using multi_acquire_done = basic_completion<std::int64_t>;
/// How a composite unlock ends: the first failure and each member's outcome. Completed once, on the
/// composite's strand.
using multi_unlock_done = basic_completion<std::vector<std::error_code>>;

/// `ex` runs the composite's state (wrapped in a strand); member completions are posted to it.
std::shared_ptr<multi_core> make_multi_core(asio::any_io_executor ex, std::vector<reentrant_lock> locks,
                                            multi_kind kind);
const asio::any_io_executor& multi_executor(const multi_core& core);
std::size_t multi_size(const multi_core& core);
/// wait_ms: 0 one attempt per member, > 0 Redisson's tryLock(wait); until_acquired: lock() (loops
/// tryLock with Redisson's waitTime rules). lease_ms 0: the members' watchdogs.
void multi_acquire(const std::shared_ptr<multi_core>& core, owner_id owner, std::int64_t wait_ms,
                   std::int64_t lease_ms, bool until_acquired, asio::cancellation_slot slot,
                   multi_acquire_done& done);
void multi_unlock(const std::shared_ptr<multi_core>& core, owner_id owner, multi_unlock_done& done);
/// How long the composite is valid for `owner`, in ms (each member's async_valid_for): a multi lock,
/// the least of its members'; a red lock, the (n/2 + 1)-th largest (until fewer than a majority are
/// valid).
void multi_valid_for(const std::shared_ptr<multi_core>& core, owner_id owner, multi_acquire_done& done);
/// Keeps a result vector's buffer for the next unlock on this thread (the handler did not take it).
void recycle_unlock_results(std::vector<std::error_code>& each) noexcept;

struct result_each {
  using value_type = std::vector<std::error_code>;
  using signature = void(std::error_code, std::vector<std::error_code>);
  template <typename H>
  static void call(H& h, std::error_code ec, std::vector<std::error_code>&& each) {
    std::move(h)(ec, std::move(each));
    recycle_unlock_results(each);  // a handler that took `each` by reference left its buffer here
  }
};

/// A composite operation's handler, in memory from the handler's associated allocator (by default
/// the per-thread block cache), so steady-state composites do not allocate. The composite completes
/// on its strand: a handler without an executor of its own runs right there (what a dispatch to the
/// strand does), one with an executor is dispatched to it.
template <typename Handler, typename Result>
class multi_completion final : public basic_completion<typename Result::value_type> {
 public:
  using value_type = typename Result::value_type;

  static multi_completion* create(Handler&& h) {
    auto alloc = rebound(h);
    auto* p = std::allocator_traits<decltype(alloc)>::allocate(alloc, 1);
    return new (p) multi_completion(std::move(h));
  }

  void complete(std::error_code ec, value_type value) override {
    Handler h(std::move(handler_));
    destroy(this, h);
    if constexpr (std::is_same_v<asio::associated_executor_t<Handler, asio::system_executor>, asio::system_executor>) {
      Result::call(h, ec, std::move(value));
    } else {
      auto ex = asio::get_associated_executor(h);
      asio::dispatch(ex, [h = std::move(h), ec, value = std::move(value)]() mutable {
        Result::call(h, ec, std::move(value));
      });
    }
  }

 private:
  explicit multi_completion(Handler&& h) : handler_(std::move(h)) {}
  static auto rebound(Handler& h) {
    auto base = asio::get_associated_allocator(h, cached_allocator<void>());
    using traits = std::allocator_traits<decltype(base)>;
    return typename traits::template rebind_alloc<multi_completion>(base);
  }
  static void destroy(multi_completion* self, Handler& h) {
    auto alloc = rebound(h);
    self->~multi_completion();
    std::allocator_traits<decltype(alloc)>::deallocate(alloc, self, 1);
  }

  Handler handler_;
};

/// What both composites share: construction, the executor, acquisition plumbing and unlock.
class multi_lock_base {
 public:
  using executor_type = asio::any_io_executor;

  const executor_type& get_executor() const noexcept { return multi_executor(*core_); }
  std::size_t size() const noexcept { return multi_size(*core_); }

  /// How long this client still counts on `owner`'s hold of the composite, from its members'
  /// reentrant_lock::async_valid_for (answered locally; each member's from the send time of the
  /// request that last confirmed it, so the time the acquisition took is already taken off): a
  /// multi lock, the least of its members' (zero once one is lost or not held); a red lock, the time
  /// until fewer than a majority of its members are valid. Signature:
  /// void(std::error_code, std::chrono::milliseconds).
  template <typename Token>
  auto async_valid_for(owner_id owner, Token&& token) {
    return asio::async_initiate<Token, result_ms::signature>(
        [](auto handler, std::shared_ptr<multi_core> core, owner_id owner) {
          using done_type = multi_completion<std::decay_t<decltype(handler)>, result_ms>;
          multi_valid_for(core, owner, *done_type::create(std::move(handler)));
        },
        token, core_, owner);
  }

 protected:
  multi_lock_base(executor_type ex, std::vector<reentrant_lock> locks, multi_kind kind)
      : core_(make_multi_core(std::move(ex), std::move(locks), kind)) {}
  /// On the first member's executor.
  multi_lock_base(std::vector<reentrant_lock> locks, multi_kind kind)
      : core_(on_first_executor(std::move(locks), kind)) {}

  static std::shared_ptr<multi_core> on_first_executor(std::vector<reentrant_lock> locks, multi_kind kind) {
    // Its own statement: a by-value vector parameter beside it may be moved into first (GCC does).
    executor_type ex = locks.empty() ? executor_type(asio::system_executor()) : locks.front().get_executor();
    return make_multi_core(std::move(ex), std::move(locks), kind);
  }

  template <typename Result, typename Token>
  auto acquire(owner_id owner, std::int64_t wait_ms, std::int64_t lease_ms, bool until_acquired, Token&& token) {
    return asio::async_initiate<Token, typename Result::signature>(
        [](auto handler, std::shared_ptr<multi_core> core, owner_id owner, std::int64_t wait_ms,
           std::int64_t lease_ms, bool until_acquired) {
          auto slot = asio::get_associated_cancellation_slot(handler);
          auto* done = multi_completion<std::decay_t<decltype(handler)>, Result>::create(std::move(handler));
          multi_acquire(core, owner, wait_ms, lease_ms, until_acquired, slot, *done);
        },
        token, core_, owner, wait_ms, lease_ms, until_acquired);
  }

  template <typename Token>
  auto unlock(owner_id owner, Token&& token) {
    return asio::async_initiate<Token, result_each::signature>(
        [](auto handler, std::shared_ptr<multi_core> core, owner_id owner) {
          multi_unlock(core, owner, *multi_completion<std::decay_t<decltype(handler)>, result_each>::create(std::move(handler)));
        },
        token, core_, owner);
  }

  std::shared_ptr<multi_core> core_;
};

}  // namespace detail

/// All of its members or none (Redisson RedissonMultiLock). Members are tried in order, each with
/// the time left; a member that is busy or fails ends the round: what was taken is released and,
/// while wait time is left, the round starts again from the first member. Every operation takes an
/// Asio completion token; acquisition can be cancelled (the members taken are released first).
///
/// Leases (Redisson's rules): with a lease and a wait, each member is taken for 2 x wait (so the
/// first survives the acquisition) and, once all are held, PEXPIREd to the lease; with a lease and
/// no wait, for the lease; without a lease each member's own client watchdog keeps it.
///
/// The composite's state runs on a strand of the first member's executor (or of `ex`); members may
/// belong to clients on other executors and io_contexts.
class multi_lock : public detail::multi_lock_base {
 public:
  explicit multi_lock(std::vector<reentrant_lock> locks)
      : multi_lock_base(std::move(locks), detail::multi_kind::all) {}
  multi_lock(executor_type ex, std::vector<reentrant_lock> locks)
      : multi_lock_base(std::move(ex), std::move(locks), detail::multi_kind::all) {}

  /// Loops tryLock until all members are held (Redisson lock(): wait n x 1500 ms per round without
  /// a lease, else a random part of the lease). Ends early only on an error that retrying cannot
  /// cure (wrong_type, permission_denied, auth_failed, shutting_down, ...) or on cancellation.
  /// Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, Token&& token) {
    return async_lock(owner, std::chrono::milliseconds(0), std::forward<Token>(token));
  }
  template <typename Token>
  auto async_lock(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return acquire<detail::result_void>(owner, 0, lease.count(), true, std::forward<Token>(token));
  }
  /// One attempt per member, no waiting. Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_lock(owner_id owner, Token&& token) {
    return async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::milliseconds(0),
                          std::forward<Token>(token));
  }
  /// Waits up to `wait` in all; `lease` zero: the watchdogs. Signature: void(std::error_code, bool).
  /// Not acquired with an error code: the member that ended the last round failed with it (a down
  /// server, wrong_type, ...); without one: a member was held by someone else.
  template <typename Token>
  auto async_try_lock(owner_id owner, std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                      Token&& token) {
    return acquire<detail::result_bool>(owner, wait.count() < 0 ? 0 : wait.count(), lease.count(), false,
                                        std::forward<Token>(token));
  }
  /// Releases one hold on every member (in parallel), even after some fail.
  /// Signature: void(std::error_code first, std::vector<std::error_code> each): `each[i]` is member
  /// i's outcome, `first` the first failure in member order (empty if all were released). A handler
  /// that takes `each` by reference leaves its buffer to the next unlock on that thread (no allocation).
  template <typename Token>
  auto async_unlock(owner_id owner, Token&& token) {
    return unlock(owner, std::forward<Token>(token));
  }
};

/// A majority of its members (Redisson RedissonRedLock, the Redlock algorithm). Put each member on
/// its own independent server. Members are tried in order, each for at most max(wait / n, 1 ms);
/// once n/2 + 1 are held the rest are not tried. A success reports the lock's validity, lease minus
/// the time the acquisition took minus clock drift (1% of the lease + 2 ms); a validity <= 0 counts
/// as a failure. After a failed round every member that round took is released (a member whose
/// outcome stayed unknown is resolved by its client on that lock's next operation, and is not renewed
/// meanwhile; a hold the owner had before is never touched), and while wait time is left the round
/// starts again after a random pause.
///
/// Deprecated in Redisson since 3.25 and weaker than a fenced lock: a holder paused past its
/// validity does not know it lost the lock. See docs/locks/red_lock.md.
class red_lock : public detail::multi_lock_base {
 public:
  explicit red_lock(std::vector<reentrant_lock> locks)
      : multi_lock_base(std::move(locks), detail::multi_kind::quorum) {}
  red_lock(executor_type ex, std::vector<reentrant_lock> locks)
      : multi_lock_base(std::move(ex), std::move(locks), detail::multi_kind::quorum) {}

  /// How many members must be held: n/2 + 1.
  std::size_t quorum() const noexcept { return size() / 2 + 1; }

  /// As multi_lock::async_lock. Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, Token&& token) {
    return async_lock(owner, std::chrono::milliseconds(0), std::forward<Token>(token));
  }
  template <typename Token>
  auto async_lock(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return acquire<detail::result_void>(owner, 0, lease.count(), true, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, std::chrono::milliseconds validity): acquired iff validity > 0.
  /// Not acquired with errc::quorum_not_reached: some members failed with errors (down servers,
  /// timeouts); without an error code: too many members were held by others, or the wait ran out.
  template <typename Token>
  auto async_try_lock(owner_id owner, Token&& token) {
    return async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::milliseconds(0),
                          std::forward<Token>(token));
  }
  template <typename Token>
  auto async_try_lock(owner_id owner, std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                      Token&& token) {
    return acquire<detail::result_ms>(owner, wait.count() < 0 ? 0 : wait.count(), lease.count(),
                                                  false, std::forward<Token>(token));
  }
  /// Releases every member (in parallel), including those not taken (a timed-out acquire may have
  /// run). Signature: void(std::error_code, std::vector<std::error_code> each). Members this owner
  /// did not hold answer not_owner in `each`; the first code is the first other failure, or
  /// not_owner if no member was held at all. As multi_lock's, a handler that takes `each` by
  /// reference leaves its buffer to the next unlock on that thread (no allocation).
  template <typename Token>
  auto async_unlock(owner_id owner, Token&& token) {
    return unlock(owner, std::forward<Token>(token));
  }
};

}  // namespace deadbolt
