// RedissonMultiLock and RedissonRedLock (docs/protocol.md §7) over reentrant_lock members.
//   rounds    members are tried in order (Redisson's tryLock loop); a failure beyond failedLocksLimit
//             (0 for the multi lock, n - (n/2+1) for the red lock) ends the round: the members this
//             round took are released (never a hold the owner had before: a member's own acquire
//             gives back what a cancelled attempt took, and remembers an unknown outcome for its
//             next operation), and the round restarts after a random pause while wait time is left.
//   leases    with a lease, members are taken for 2 x wait (or the lease if no wait), then PEXPIREd to
//             the lease by the renewal script (lua/lock_renew.lua, EVALSHA): only if the hold is still ours.
//   threads   everything here runs on the composite's strand; member completions are bound to it.
//             A cancellation reaches each member on its own client's executor (members may live on
//             different event loops), through a signal of its own.
//   memory    operations and their per-member state come from the per-thread block cache, the
//             strand's executor answers Asio's blocking query without the heap, and an unlock's
//             result vector is recycled when its handler leaves it (takes it by reference): steady-state
//             acquire/unlock pairs do not allocate.
#include <algorithm>
#include <chrono>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "base/deadline.hpp"
#include "composite/known_blocking_executor.hpp"
#include "deadbolt/detail/block_cache.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/multi_lock.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {

class multi_core {
 public:
  multi_core(asio::any_io_executor ex, std::vector<reentrant_lock> l, multi_kind k)
      : locks(std::move(l)), strand(known_blocking_executor::wrap(std::move(ex))), executor(strand), kind(k) {}

  std::size_t n() const { return locks.size(); }
  std::size_t failed_limit() const { return kind == multi_kind::all ? 0 : n() - (n() / 2 + 1); }

  // First, so destroyed last: the members' clients may own the io_context the strand lives in.
  std::vector<reentrant_lock> locks;
  // Kept as its own type internally: dispatching through an any_io_executor holding a strand would
  // ask it for its blocking property, which allocates.
  asio::strand<known_blocking_executor> strand;
  asio::any_io_executor executor;  ///< the same strand, for get_executor() and the retry timer
  multi_kind kind;
};

namespace {

constexpr std::int64_t per_member_lock_wait_ms = 1500;  // Redisson lock(): waitTime = n * 1500 ms
constexpr std::int64_t max_retry_pause_ms = 50;

// Errors a retry cannot cure: lock() reports them instead of looping.
bool permanent(std::error_code ec) {
  return ec == errc::invalid_config || ec == errc::invalid_url || ec == errc::auth_failed ||
         ec == errc::permission_denied || ec == errc::wrong_type || ec == errc::shutting_down;
}

std::int64_t now_ns() { return port::monotonic_ns(); }

std::int64_t random_between(std::int64_t lo, std::int64_t hi) {  // [lo, hi)
  if (hi <= lo) return lo;
  thread_local std::minstd_rand gen(static_cast<std::uint32_t>(port::monotonic_ns() ^ port::thread_id()));
  return lo + static_cast<std::int64_t>(gen() % static_cast<std::uint64_t>(hi - lo));
}

// held: taken by this round. lapsed: taken by this round, but shortening its lease failed (it may
// still be ours). failed: the attempt ended with an error (the member's acquire resolved it itself).
enum class member_state : unsigned char { untried, held, busy, failed, lapsed };

template <typename T>
using cached_vector = std::vector<T, cached_allocator<T>>;

template <typename Op, typename... Args>
std::shared_ptr<Op> make_op(Args&&... args) {
  return std::allocate_shared<Op>(cached_allocator<Op>(), std::forward<Args>(args)...);
}

// The buffer of the last unlock result vector a handler left on this thread (taken by reference).
thread_local std::vector<std::error_code> spare_results;

// n empty outcomes, in the spare buffer if it is big enough.
std::vector<std::error_code> unlock_results(std::size_t n) {
  std::vector<std::error_code> each;
  each.swap(spare_results);
  each.assign(n, std::error_code{});
  return each;
}

class multi_acquire_op : public std::enable_shared_from_this<multi_acquire_op> {
 public:
  multi_acquire_op(std::shared_ptr<multi_core> m, owner_id owner, std::int64_t wait_ms, std::int64_t lease_ms,
             bool until_acquired, multi_acquire_done& done)
      : m_(std::move(m)),
        owner_(owner),
        wait_ms_(wait_ms),
        lease_ms_(lease_ms > 0 ? lease_ms : 0),
        until_acquired_(until_acquired),
        done_(&done),
        timer_(m_->executor),
        member_cancel_(m_->n()),
        states_(m_->n(), member_state::untried) {}

  // On the initiating thread, as Asio expects of a cancellation slot.
  void connect(asio::cancellation_slot slot) {
    if (slot.is_connected()) {
      slot_ = slot;
      slot_.assign([weak = weak_from_this(), strand = m_->strand](asio::cancellation_type type) {
        if ((type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                     asio::cancellation_type::total)) == asio::cancellation_type::none) {
          return;
        }
        asio::dispatch(strand, [weak] {
          if (auto self = weak.lock()) self->cancel();
        });
      });
    }
  }

  void start() {
    if (m_->locks.empty()) return finish(errc::invalid_config, 0);
    if (until_acquired_) wait_ms_ = lock_wait_ms();
    begin_try();
  }

 private:
  // Redisson lock(): the waitTime each tryLock round gets.
  std::int64_t lock_wait_ms() const {
    const std::int64_t base = static_cast<std::int64_t>(m_->n()) * per_member_lock_wait_ms;
    if (lease_ms_ == 0) return base;
    // lockAsync's floor: a short lease would otherwise give rounds too short to get anywhere.
    const std::int64_t lease = std::max<std::int64_t>(lease_ms_, 2000);
    if (lease <= base) return random_between(lease / 2, lease);
    return random_between(base, lease);
  }

  void cancel() {
    cancelled_ = true;
    // The member's operation installed its cancellation handler on its own executor: emit there.
    for (std::size_t i = 0; i < m_->n(); ++i) {
      asio::dispatch(m_->locks[i].get_executor(), [self = shared_from_this(), i] {
        self->member_cancel_[i].emit(asio::cancellation_type::terminal);
      });
    }
    timer_.cancel();
  }

  // One tryLock(wait, lease) call of Redisson's.
  void begin_try() {
    deadline_ns_ = wait_ms_ > 0 ? deadline_after_ms(wait_ms_) : -1;
    member_lease_ms_ = lease_ms_ > 0 ? (wait_ms_ > 0 ? std::min(wait_ms_, max_lease_ms / 2) * 2 : lease_ms_) : 0;
    const std::int64_t n = static_cast<std::int64_t>(m_->n());
    member_wait_ms_ = m_->kind == multi_kind::all ? wait_ms_ : std::max<std::int64_t>(wait_ms_ / n, 1);
    begin_round();
  }

  void begin_round() {
    std::fill(states_.begin(), states_.end(), member_state::untried);
    held_ = 0;
    failed_left_ = m_->failed_limit();
    round_error_ = {};
    round_failed_with_error_ = false;
    round_permanent_error_ = {};
    round_start_ns_ = now_ns();
    next_ = 0;
    try_next();
  }

  std::int64_t remain_ms() const { return deadline_ns_ < 0 ? -1 : (deadline_ns_ - now_ns()) / ms_to_ns; }

  void try_next() {
    if (cancelled_) return round_failed(asio::error::operation_aborted);
    if (next_ == m_->n()) return all_tried();
    const std::size_t i = next_;
    std::int64_t wait = 0;
    if (deadline_ns_ >= 0) {
      wait = std::max<std::int64_t>(std::min(member_wait_ms_, remain_ms()), 0);
    } else if (wait_ms_ > 0) {
      wait = member_wait_ms_;  // a wait too long for the clock: no deadline
    }
    auto self = shared_from_this();
    m_->locks[i].async_try_lock(
        owner_, std::chrono::milliseconds(wait), std::chrono::milliseconds(member_lease_ms_),
        asio::bind_cancellation_slot(member_cancel_[i].slot(),
                                     asio::bind_executor(m_->strand, [self, i](std::error_code ec, bool got) {
                                       self->on_member(i, ec, got);
                                     })));
  }

  void on_member(std::size_t i, std::error_code ec, bool got) {
    if (!ec && got) {
      states_[i] = member_state::held;
      ++held_;
    } else {
      states_[i] = ec ? member_state::failed : member_state::busy;
      if (ec) {
        round_failed_with_error_ = true;
        if (!round_error_) round_error_ = ec;
        if (permanent(ec) && !round_permanent_error_) round_permanent_error_ = ec;
      }
      if (cancelled_) return round_failed(asio::error::operation_aborted);
      // The red lock's shortcut: a quorum is certain (or all that can be had), the rest is not tried.
      if (m_->n() - held_ == m_->failed_limit()) return all_tried();
      if (failed_left_ == 0) {
        if (m_->kind == multi_kind::all) return round_failed(ec);
        return round_failed(round_failed_with_error_ ? make_error_code(errc::quorum_not_reached) : std::error_code{});
      }
      --failed_left_;
    }
    if (deadline_ns_ >= 0 && now_ns() >= deadline_ns_) return round_failed(no_time_error());
    ++next_;
    try_next();
  }

  std::error_code no_time_error() const {
    if (!round_failed_with_error_) return {};
    return m_->kind == multi_kind::all ? round_error_ : make_error_code(errc::quorum_not_reached);
  }

  // Enough members are held (all, or a quorum with the rest failed or untried).
  void all_tried() {
    if (held_ < m_->n() - m_->failed_limit()) return round_failed(no_time_error());
    // No wait: the members were taken for the lease itself (Redisson PEXPIREs anyway; it is a no-op).
    if (lease_ms_ == 0 || member_lease_ms_ == lease_ms_) return report();
    pending_ = 0;
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (states_[i] == member_state::held) ++pending_;
    }
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (states_[i] == member_state::held) expire_member(i);
    }
  }

  void expire_member(std::size_t i) {
    m_->locks[i].async_set_lease(owner_, std::chrono::milliseconds(lease_ms_),
                                 asio::bind_executor(m_->strand, [self = shared_from_this(), i](std::error_code ec,
                                                                                                 bool ours) {
                                   self->on_expired(i, ec, ours);
                                 }));
  }

  void on_expired(std::size_t i, std::error_code ec, bool ours) {
    if (ec || !ours) {
      states_[i] = member_state::lapsed;  // gone, or unknown: released with the rest if the round fails
      --held_;
      round_failed_with_error_ = true;
      if (!round_error_) round_error_ = ec ? ec : make_error_code(errc::lease_lost);
    }
    if (--pending_ > 0) return;
    if (held_ < m_->n() - m_->failed_limit()) return round_failed(no_time_error());
    report();
  }

  void report() {
    if (m_->kind == multi_kind::all) return finish({}, 1);
    std::int64_t lease = lease_ms_;
    if (lease == 0) {  // the watchdogs' lease: the shortest among the members held
      for (std::size_t i = 0; i < states_.size(); ++i) {
        if (states_[i] != member_state::held) continue;
        const std::int64_t w = m_->locks[i].watchdog_lease().count();
        lease = lease == 0 ? w : std::min(lease, w);
      }
    }
    const std::int64_t drift = lease / 100 + 2;
    const std::int64_t validity = lease - (now_ns() - round_start_ns_) / ms_to_ns - drift;
    if (validity > 0) return finish({}, validity);
    round_failed({});
  }

  // Releases what the round may hold, then ends the try or starts another round.
  void round_failed(std::error_code ec) {
    result_ec_ = ec;
    pending_ = 1;  // this call's own share, so the last release cannot finish before all are sent
    for (std::size_t i = 0; i < states_.size(); ++i) {
      if (states_[i] == member_state::held || states_[i] == member_state::lapsed) {
        ++pending_;
        release_member(i, shared_from_this());
      }
      states_[i] = member_state::untried;
    }
    held_ = 0;
    released_one();
  }

  void release_member(std::size_t i, std::shared_ptr<multi_acquire_op> waiting) {
    m_->locks[i].async_unlock(owner_, asio::bind_executor(m_->strand, [waiting = std::move(waiting)](std::error_code) {
                                waiting->released_one();
                              }));
  }

  void released_one() {
    if (--pending_ > 0) return;
    const std::error_code ec = result_ec_;
    if (cancelled_) return finish(asio::error::operation_aborted, 0);
    if (until_acquired_) {
      if (round_permanent_error_) return finish(round_permanent_error_, 0);
      return pause_then([self = shared_from_this()] { self->begin_try(); });
    }
    if (permanent(ec) || wait_ms_ <= 0 || (deadline_ns_ >= 0 && now_ns() >= deadline_ns_)) return finish(ec, 0);
    pause_then([self = shared_from_this()] { self->begin_round(); });
  }

  // A random pause before the next round (Redlock), never past the deadline.
  template <typename Next>
  void pause_then(Next next) {
    std::int64_t cap = max_retry_pause_ms;
    if (deadline_ns_ >= 0 && !until_acquired_) cap = std::min(cap, std::max<std::int64_t>(remain_ms(), 0));
    timer_.expires_after(std::chrono::milliseconds(random_between(0, cap + 1)));
    timer_.async_wait([self = shared_from_this(), next = std::move(next)](std::error_code) mutable {
      if (self->cancelled_) return self->finish(asio::error::operation_aborted, 0);
      next();
    });
  }

  void finish(std::error_code ec, std::int64_t value) {
    if (done_ == nullptr) return;
    if (slot_.is_connected()) slot_.clear();
    std::exchange(done_, nullptr)->complete(ec, value);
  }

  std::shared_ptr<multi_core> m_;
  owner_id owner_;
  std::int64_t wait_ms_;
  std::int64_t lease_ms_;
  bool until_acquired_;
  multi_acquire_done* done_;  // null once completed
  asio::steady_timer timer_;
  asio::cancellation_slot slot_;
  cached_vector<asio::cancellation_signal> member_cancel_;  // one per member, never resized
  bool cancelled_ = false;

  std::int64_t deadline_ns_ = -1;
  std::int64_t member_lease_ms_ = 0;
  std::int64_t member_wait_ms_ = 0;
  cached_vector<member_state> states_;
  std::size_t held_ = 0;
  std::size_t failed_left_ = 0;
  std::size_t next_ = 0;
  std::size_t pending_ = 0;
  std::int64_t round_start_ns_ = 0;
  std::error_code round_error_;
  bool round_failed_with_error_ = false;
  std::error_code round_permanent_error_;
  std::error_code result_ec_;
};

class multi_unlock_op : public std::enable_shared_from_this<multi_unlock_op> {
 public:
  multi_unlock_op(std::shared_ptr<multi_core> m, owner_id owner, multi_unlock_done& done)
      : m_(std::move(m)), owner_(owner), done_(done), pending_(m_->n()) {}

  void start() {
    if (m_->locks.empty()) return done_.complete(errc::invalid_config, {});
    each_ = unlock_results(m_->n());  // on the strand's thread, where the last handler may have left one
    for (std::size_t i = 0; i < m_->n(); ++i) {
      m_->locks[i].async_unlock(owner_, asio::bind_executor(m_->strand, [self = shared_from_this(), i](std::error_code ec) {
                                  self->each_[i] = ec;
                                  if (--self->pending_ == 0) self->report();
                                }));
    }
  }

 private:
  void report() {
    std::error_code first;
    if (m_->kind == multi_kind::all) {
      for (const auto& ec : each_) {
        if (ec) {
          first = ec;
          break;
        }
      }
    } else {
      // Members not held by this owner answer not_owner; that is only news if none was held.
      bool any_released = false;
      for (const auto& ec : each_) {
        if (!ec) any_released = true;
        if (ec && ec != errc::not_owner && !first) first = ec;
      }
      if (!first && !any_released) first = errc::not_owner;
    }
    // Let go of the members before the caller hears back (Asio's rule for composed operations): the
    // caller may then destroy their clients and io_contexts, which must not find a member still held
    // by this operation on another thread.
    m_.reset();
    done_.complete(first, std::move(each_));
  }

  std::shared_ptr<multi_core> m_;
  owner_id owner_;
  multi_unlock_done& done_;
  std::vector<std::error_code> each_;
  std::size_t pending_;
};

// Each member's validity, asked in parallel; the composite's is the one at the quorum's place.
class multi_valid_op : public std::enable_shared_from_this<multi_valid_op> {
 public:
  multi_valid_op(std::shared_ptr<multi_core> m, owner_id owner, multi_acquire_done& done)
      : m_(std::move(m)), owner_(owner), done_(done), pending_(m_->n()), each_(m_->n(), 0) {}

  void start() {
    if (m_->locks.empty()) return done_.complete(errc::invalid_config, 0);
    for (std::size_t i = 0; i < m_->n(); ++i) {
      auto answered = [self = shared_from_this(), i](std::error_code ec, std::chrono::milliseconds v) {
        self->each_[i] = ec ? 0 : v.count();
        if (ec && !self->first_error_) self->first_error_ = ec;
        if (--self->pending_ == 0) self->report();
      };
      m_->locks[i].async_valid_for(owner_, asio::bind_executor(m_->strand, std::move(answered)));
    }
  }

 private:
  void report() {
    // Valid while the members the composite needs are: all of them, or a majority.
    const std::size_t needed = m_->n() - m_->failed_limit();
    std::sort(each_.begin(), each_.end(), std::greater<>());
    const std::int64_t valid = each_[needed - 1];
    m_.reset();  // as multi_unlock_op: the members are let go before the caller hears back
    done_.complete(valid > 0 ? std::error_code() : first_error_, valid);
  }

  std::shared_ptr<multi_core> m_;
  owner_id owner_;
  multi_acquire_done& done_;
  std::size_t pending_;
  cached_vector<std::int64_t> each_;
  std::error_code first_error_;
};

}  // namespace

std::shared_ptr<multi_core> make_multi_core(asio::any_io_executor ex, std::vector<reentrant_lock> locks,
                                            multi_kind kind) {
  return std::make_shared<multi_core>(std::move(ex), std::move(locks), kind);
}

const asio::any_io_executor& multi_executor(const multi_core& core) { return core.executor; }
std::size_t multi_size(const multi_core& core) { return core.n(); }

void multi_acquire(const std::shared_ptr<multi_core>& core, owner_id owner, std::int64_t wait_ms,
                   std::int64_t lease_ms, bool until_acquired, asio::cancellation_slot slot,
                   multi_acquire_done& done) {
  auto op = make_op<multi_acquire_op>(core, owner, wait_ms, lease_ms, until_acquired, done);
  op->connect(slot);
  asio::dispatch(core->strand, [op] { op->start(); });
}

void multi_unlock(const std::shared_ptr<multi_core>& core, owner_id owner, multi_unlock_done& done) {
  asio::dispatch(core->strand, [op = make_op<multi_unlock_op>(core, owner, done)] { op->start(); });
}

void multi_valid_for(const std::shared_ptr<multi_core>& core, owner_id owner, multi_acquire_done& done) {
  asio::dispatch(core->strand, [op = make_op<multi_valid_op>(core, owner, done)] { op->start(); });
}

void recycle_unlock_results(std::vector<std::error_code>& each) noexcept {
  if (each.capacity() > spare_results.capacity()) spare_results.swap(each);
}

}  // namespace deadbolt::detail
