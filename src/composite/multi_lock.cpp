// RedissonMultiLock and RedissonRedLock (docs/protocol.md §7) over reentrant_lock members: the driver.
//   rounds    what to try, hold, give back, retry and report is decided by composite/composite_rounds
//             (sans-I/O; tests/core/composite_rounds_test.cpp); this file carries it out: member
//             acquires, lease changes (lua/lock_renew.lua by EVALSHA: only if the hold is still ours)
//             and unlocks, the pause timer, cancellation, the completion. Unlock and valid_for ask
//             every member in parallel and hand the answers to the core's verdicts.
//   threads   everything here runs on the composite's strand; member completions are bound to it.
//             A cancellation reaches each member on its own client's executor (members may live on
//             different event loops), through a signal of its own.
//   memory    operations and their per-member state come from the per-thread block cache, the
//             strand's executor answers Asio's blocking query without the heap, and an unlock's
//             result vector is recycled when its handler leaves it (takes it by reference): steady-state
//             acquire/unlock pairs do not allocate.
#include <chrono>
#include <memory>
#include <utility>
#include <vector>

#include "base/random.hpp"
#include "composite/composite_rounds.hpp"
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

  // First, so destroyed last: the members' clients may own the io_context the strand lives in.
  std::vector<reentrant_lock> locks;
  // Kept as its own type internally: dispatching through an any_io_executor holding a strand would
  // ask it for its blocking property, which allocates.
  asio::strand<known_blocking_executor> strand;
  asio::any_io_executor executor;  ///< the same strand, for get_executor() and the retry timer
  multi_kind kind;
};

namespace {

composite_quorum quorum_of(multi_kind kind) {
  return kind == multi_kind::all ? composite_quorum::all : composite_quorum::majority;
}

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

cached_vector<composite_member> member_records(const multi_core& m) {
  cached_vector<composite_member> records(m.n());
  for (std::size_t i = 0; i < m.n(); ++i) records[i].watchdog_lease_ms = m.locks[i].watchdog_lease().count();
  return records;
}

round_settings settings_of(const multi_core& m, std::int64_t wait_ms, std::int64_t lease_ms, bool until_acquired) {
  round_settings s;
  s.quorum = quorum_of(m.kind);
  s.wait_ms = wait_ms;
  s.lease_ms = lease_ms;
  s.until_acquired = until_acquired;
  return s;
}

// Carries out what the rounds decide (composite/composite_rounds.hpp): member acquires, leases and
// releases, the pause, cancellation, the completion.
class multi_acquire_op : public std::enable_shared_from_this<multi_acquire_op> {
 public:
  multi_acquire_op(std::shared_ptr<multi_core> m, owner_id owner, std::int64_t wait_ms, std::int64_t lease_ms,
                   bool until_acquired, multi_acquire_done& done)
      : m_(std::move(m)),
        owner_(owner),
        done_(&done),
        timer_(m_->executor),
        member_cancel_(m_->n()),
        members_(member_records(*m_)),
        rounds_(settings_of(*m_, wait_ms, lease_ms, until_acquired), members_.data(), members_.size(),
                thread_random()) {}

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
          if (auto self = weak.lock()) self->carry_out(self->rounds_.cancel());
        });
      });
    }
  }

  void start() { carry_out(rounds_.start(now_ns())); }

 private:
  static std::int64_t now_ns() { return port::monotonic_ns(); }

  void carry_out(const round_action& a) {
    switch (a.what) {
      case round_action::kind::none: return;
      case round_action::kind::try_member: return try_member(a.member, a.wait_ms, a.lease_ms);
      case round_action::kind::set_leases:
        for (std::size_t i = 0; i < members_.size(); ++i) {
          if (rounds_.member(i) == member_state::expiring) set_lease(i, a.lease_ms);
        }
        return carry_out(rounds_.leases_sent(now_ns()));
      case round_action::kind::release:
        for (std::size_t i = 0; i < members_.size(); ++i) {
          if (rounds_.member(i) == member_state::releasing) release(i);
        }
        return carry_out(rounds_.releases_sent(now_ns()));
      case round_action::kind::cancel_members: return cancel_members();
      case round_action::kind::pause: return pause(a.wait_ms);
      case round_action::kind::finish: return finish(a.aborted ? asio::error::operation_aborted : a.ec, a.value);
    }
  }

  void try_member(std::size_t i, std::int64_t wait_ms, std::int64_t lease_ms) {
    m_->locks[i].async_try_lock(
        owner_, std::chrono::milliseconds(wait_ms), std::chrono::milliseconds(lease_ms),
        asio::bind_cancellation_slot(member_cancel_[i].slot(),
                                     asio::bind_executor(m_->strand, [self = shared_from_this(), i](std::error_code ec,
                                                                                                    bool got) {
                                       self->carry_out(self->rounds_.member_answered(i, ec, got, now_ns()));
                                     })));
  }

  void set_lease(std::size_t i, std::int64_t lease_ms) {
    m_->locks[i].async_set_lease(owner_, std::chrono::milliseconds(lease_ms),
                                 asio::bind_executor(m_->strand, [self = shared_from_this(), i](std::error_code ec,
                                                                                                 bool ours) {
                                   self->carry_out(self->rounds_.lease_set(i, ec, ours, now_ns()));
                                 }));
  }

  void release(std::size_t i) {
    m_->locks[i].async_unlock(owner_, asio::bind_executor(m_->strand, [self = shared_from_this(), i](std::error_code) {
                                self->carry_out(self->rounds_.released(i, now_ns()));
                              }));
  }

  // The member's operation installed its cancellation handler on its own executor: emit there.
  void cancel_members() {
    for (std::size_t i = 0; i < m_->n(); ++i) {
      asio::dispatch(m_->locks[i].get_executor(), [self = shared_from_this(), i] {
        self->member_cancel_[i].emit(asio::cancellation_type::terminal);
      });
    }
    timer_.cancel();
  }

  void pause(std::int64_t ms) {
    timer_.expires_after(std::chrono::milliseconds(ms));
    timer_.async_wait([self = shared_from_this()](std::error_code) {
      self->carry_out(self->rounds_.pause_over(now_ns()));
    });
  }

  void finish(std::error_code ec, std::int64_t value) {
    if (done_ == nullptr) return;
    if (slot_.is_connected()) slot_.clear();
    std::exchange(done_, nullptr)->complete(ec, value);
  }

  std::shared_ptr<multi_core> m_;
  owner_id owner_;
  multi_acquire_done* done_;  // null once completed
  asio::steady_timer timer_;
  asio::cancellation_slot slot_;
  cached_vector<asio::cancellation_signal> member_cancel_;  // one per member, never resized
  cached_vector<composite_member> members_;                 // the rounds' records, never resized
  composite_rounds rounds_;
};

class multi_unlock_op : public std::enable_shared_from_this<multi_unlock_op> {
 public:
  multi_unlock_op(std::shared_ptr<multi_core> m, owner_id owner, multi_unlock_done& done)
      : m_(std::move(m)), owner_(owner), done_(done), pending_(m_->n()) {}

  void start() {
    if (m_->locks.empty()) return done_.complete(unlock_verdict(quorum_of(m_->kind), nullptr, 0), {});
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
    const std::error_code first = unlock_verdict(quorum_of(m_->kind), each_.data(), each_.size());
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
    if (m_->locks.empty()) {
      const validity_verdict none = valid_for_verdict(quorum_of(m_->kind), nullptr, 0, {});
      return done_.complete(none.ec, none.ms);
    }
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
    const validity_verdict v = valid_for_verdict(quorum_of(m_->kind), each_.data(), each_.size(), first_error_);
    m_.reset();  // as multi_unlock_op: the members are let go before the caller hears back
    done_.complete(v.ec, v.ms);
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
