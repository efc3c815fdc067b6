// The multi lock's and the red lock's decisions (docs/protocol.md §7), without I/O: no Asio, no
// clock, no server. The driver (src/composite/multi_lock.cpp) feeds it what happened — a member
// answered, a lease was set, a release came back, the pause ended, the caller cancelled — with the
// time, and carries out the action it answers. tests/core/composite_rounds_test.cpp drives it with no
// server.
//
// The rules it keeps (Redisson's tryLock loop, plus what deadbolt adds):
//   rounds    members are tried in order, each with its share of the wait (the multi lock: the time
//             left; the red lock: max(wait / n, 1 ms), never more than the time left). A member that
//             is busy or fails spends one of the round's allowed failures (0 for the multi lock,
//             n - (n/2 + 1) for the red lock); one more ends the round. The red lock's shortcut: once
//             the members not held are exactly the allowance, the rest are not tried.
//   deadline  the time is checked after each member: a round still going at the deadline fails.
//   leases    with a lease, members are taken for 2 x wait (the lease itself without a wait) and,
//             once enough are held, set to the lease; a member whose lease could not be set (lapsed:
//             gone, or unknown) no longer counts and is released with the rest if the round fails.
//   validity  the red lock's: lease (or the shortest watchdog lease among the members held) minus the
//             time since the round started minus the drift (1% + 2 ms); <= 0 fails the round.
//   giving back  a failed round releases what it took (held or lapsed), never a member that only
//             failed or was busy: a failed member's own acquire already gave back what it could and
//             notes an unknown outcome for that lock's next operation, and an unlock sent to it could
//             release a hold the owner had before the composite.
//   retries   after the releases: a lock() starts a new try after a random pause (<= 50 ms) unless a
//             member failed with an error no retry can cure; a tryLock(wait) starts a new round after
//             a random pause never past its deadline, while wait time is left and no such error came.
//   cancel    stops between steps: a member attempt in flight is cancelled and its answer awaited (a
//             hold it took is given back with the rest); a pause ends at once. Once enough members
//             are held and their leases are being set, a round that succeeds still reports success.
//   results   multi lock: value 1 when acquired; red lock: the validity in ms. Not acquired: 0, with
//             the error of the member that ended the round (multi lock) or quorum_not_reached if a
//             member failed with an error (red lock); no error when members were only busy.
// Unlock and valid_for over the members are one verdict each over what every member answered
// (unlock_verdict, valid_for_verdict).
#pragma once

#include <cstddef>
#include <cstdint>
#include <system_error>

#include "base/random.hpp"

namespace deadbolt::detail {

/// How many members the composite needs: all (multi lock) or a majority (red lock).
enum class composite_quorum : unsigned char { all, majority };

/// A member's part in the current round.
enum class member_state : unsigned char {
  untried,    // not tried this round (or released again)
  trying,     // its acquire is in flight
  held,       // taken by this round
  busy,       // held by someone else
  failed,     // its acquire ended with an error (it resolved what it could itself)
  expiring,   // held, its lease being set
  lapsed,     // held, but setting its lease failed: gone, or unknown
  releasing,  // its unlock is in flight
};

/// One per member; the driver owns them (the core never allocates).
struct composite_member {
  member_state state = member_state::untried;
  std::int64_t watchdog_lease_ms = 0;  ///< its client's watchdog lease: the validity without a lease
};

struct round_settings {
  composite_quorum quorum = composite_quorum::all;
  std::int64_t wait_ms = 0;     ///< 0: one attempt per member; > 0 Redisson's tryLock(wait)
  std::int64_t lease_ms = 0;    ///< <= 0: the members' watchdogs
  bool until_acquired = false;  ///< lock(): tries again until acquired (Redisson's waitTime rules)
};

/// What the driver does next.
struct round_action {
  enum class kind : unsigned char {
    none,            // wait for answers already asked for
    try_member,      // acquire `member` for `lease_ms` waiting at most `wait_ms`; then member_answered
    set_leases,      // set every `expiring` member's lease to `lease_ms`; then leases_sent, and
                     // lease_set for each
    release,         // unlock every `releasing` member; then releases_sent, and released for each
    cancel_members,  // cancel the member attempt in flight (each member's own signal) and the pause
    pause,           // wait `wait_ms`, then pause_over
    finish,          // complete the caller with `ec` and `value` (operation_aborted if `aborted`)
  };
  kind what = kind::none;
  std::size_t member = 0;
  std::int64_t wait_ms = 0;
  std::int64_t lease_ms = 0;
  std::error_code ec;
  std::int64_t value = 0;
  bool aborted = false;
};

/// The members a composite of `n` needs held.
inline std::size_t members_needed(composite_quorum q, std::size_t n) {
  return q == composite_quorum::all ? n : n / 2 + 1;
}

/// An error no retry can cure: lock() reports it instead of trying again.
bool permanent_error(std::error_code ec);

class composite_rounds {
 public:
  /// `members`: `n` records the driver keeps for as long as the core runs. `seed` feeds the random
  /// pauses and lock()'s wait.
  composite_rounds(const round_settings& settings, composite_member* members, std::size_t n, std::uint64_t seed);

  round_action start(std::int64_t now_ns);
  /// Member `i`'s acquire answered: an error, or whether it took the lock.
  round_action member_answered(std::size_t i, std::error_code ec, bool acquired, std::int64_t now_ns);
  /// Member `i`'s lease was set (`ours`) or not (it is gone, or the answer is an error).
  round_action lease_set(std::size_t i, std::error_code ec, bool ours, std::int64_t now_ns);
  /// The driver has asked for every lease of a set_leases action.
  round_action leases_sent(std::int64_t now_ns);
  /// Member `i`'s unlock answered (whatever it said: the round no longer counts on it).
  round_action released(std::size_t i, std::int64_t now_ns);
  /// The driver has sent every unlock of a release action.
  round_action releases_sent(std::int64_t now_ns);
  /// The pause of a pause action ended (or was cancelled: cancel() came first).
  round_action pause_over(std::int64_t now_ns);
  /// The caller cancelled.
  round_action cancel();

  member_state member(std::size_t i) const { return members_[i].state; }
  bool finished() const { return finished_; }
  bool cancelled() const { return cancelled_; }
  std::size_t needed() const { return members_needed(settings_.quorum, n_); }
  /// The wait of each try (lock(): drawn once at start).
  std::int64_t try_wait_ms() const { return wait_ms_; }
  /// The lease members are taken for this try; 0: their watchdogs.
  std::int64_t member_lease_ms() const { return member_lease_ms_; }
  /// The try's deadline; -1: none.
  std::int64_t deadline_ns() const { return deadline_ns_; }
  int rounds() const { return rounds_; }

 private:
  std::size_t failed_limit() const { return n_ - needed(); }
  std::int64_t remain_ms(std::int64_t now_ns) const;
  std::int64_t random_between(std::int64_t lo, std::int64_t hi);  // [lo, hi)
  std::int64_t lock_wait_ms();

  round_action begin_try(std::int64_t now_ns);
  round_action begin_round(std::int64_t now_ns);
  round_action try_next(std::int64_t now_ns);
  round_action all_tried(std::int64_t now_ns);
  round_action leases_done(std::int64_t now_ns);
  round_action report(std::int64_t now_ns);
  round_action round_failed(std::error_code ec, std::int64_t now_ns);
  round_action releases_done(std::int64_t now_ns);
  round_action pause_then(bool new_try, std::int64_t now_ns);
  round_action finish(std::error_code ec, std::int64_t value, bool aborted = false);
  std::error_code no_time_error() const;

  round_settings settings_;
  composite_member* members_;
  std::size_t n_;
  pseudo_random random_;

  std::int64_t wait_ms_ = 0;
  std::int64_t deadline_ns_ = -1;
  std::int64_t member_lease_ms_ = 0;
  std::int64_t member_wait_ms_ = 0;
  bool cancelled_ = false;
  bool finished_ = false;
  bool pause_starts_try_ = false;  // what pause_over begins: a new try (lock()) or a new round
  int rounds_ = 0;

  // The round's.
  std::size_t held_ = 0;
  std::size_t failed_left_ = 0;
  std::size_t next_ = 0;
  std::size_t pending_ = 0;  // leases or releases asked for and not answered (+1 until all are sent)
  std::int64_t round_start_ns_ = 0;
  std::error_code round_error_;           // the first error a member answered
  bool round_failed_with_error_ = false;  // a member answered an error (or a lease was lost)
  std::error_code round_permanent_error_;
  std::error_code result_ec_;             // what the failed round reports if it is the last
};

/// What the caller of an unlock hears, from each member's outcome (`each`, member order). Multi
/// lock: the first failure. Red lock: the first failure other than not_owner (members it did not take
/// answer that), or not_owner if no member was released at all. No members: invalid_config.
std::error_code unlock_verdict(composite_quorum q, const std::error_code* each, std::size_t n);

struct validity_verdict {
  std::error_code ec;
  std::int64_t ms = 0;
};

/// The composite's validity from each member's (`each_ms`, 0 for a member not valid or that failed;
/// reordered): the needed-th largest — the least for a multi lock, the time until fewer than a majority
/// are valid for a red lock. Zero carries `first_error` (the first member error that came). No members:
/// invalid_config.
validity_verdict valid_for_verdict(composite_quorum q, std::int64_t* each_ms, std::size_t n,
                                   std::error_code first_error);

}  // namespace deadbolt::detail
