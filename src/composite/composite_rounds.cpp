#include "composite/composite_rounds.hpp"

#include <algorithm>

#include "base/deadline.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

namespace {

constexpr std::int64_t per_member_lock_wait_ms = 1500;  // Redisson lock(): waitTime = n * 1500 ms
constexpr std::int64_t min_lock_lease_ms = 2000;        // lockAsync raises a shorter lease to this
constexpr std::int64_t max_retry_pause_ms = 50;

round_action act(round_action::kind what) {
  round_action a;
  a.what = what;
  return a;
}

}  // namespace

bool permanent_error(std::error_code ec) {
  return ec == errc::invalid_config || ec == errc::invalid_url || ec == errc::auth_failed ||
         ec == errc::permission_denied || ec == errc::wrong_type || ec == errc::shutting_down;
}

composite_rounds::composite_rounds(const round_settings& settings, composite_member* members, std::size_t n,
                                   std::uint64_t seed)
    : settings_(settings), members_(members), n_(n), random_(seed) {
  if (settings_.lease_ms < 0) settings_.lease_ms = 0;
  wait_ms_ = settings_.wait_ms;
}

std::int64_t composite_rounds::remain_ms(std::int64_t now_ns) const {
  return deadline_ns_ < 0 ? -1 : (deadline_ns_ - now_ns) / ms_to_ns;
}

std::int64_t composite_rounds::random_between(std::int64_t lo, std::int64_t hi) {
  if (hi <= lo) return lo;
  return lo + static_cast<std::int64_t>(random_.next() % static_cast<std::uint64_t>(hi - lo));
}

// Redisson lock(): the waitTime each tryLock round gets.
std::int64_t composite_rounds::lock_wait_ms() {
  const std::int64_t base = static_cast<std::int64_t>(n_) * per_member_lock_wait_ms;
  if (settings_.lease_ms == 0) return base;
  // lockAsync's floor: a short lease would otherwise give rounds too short to get anywhere.
  const std::int64_t lease = std::max(settings_.lease_ms, min_lock_lease_ms);
  if (lease <= base) return random_between(lease / 2, lease);
  return random_between(base, lease);
}

round_action composite_rounds::start(std::int64_t now_ns) {
  if (n_ == 0) return finish(errc::invalid_config, 0);
  if (settings_.until_acquired) wait_ms_ = lock_wait_ms();
  return begin_try(now_ns);
}

// One tryLock(wait, lease) call of Redisson's.
round_action composite_rounds::begin_try(std::int64_t now_ns) {
  deadline_ns_ = wait_ms_ > 0 ? deadline_at(now_ns, wait_ms_) : -1;
  const std::int64_t lease = settings_.lease_ms;
  member_lease_ms_ = lease > 0 ? (wait_ms_ > 0 ? std::min(wait_ms_, max_lease_ms / 2) * 2 : lease) : 0;
  const std::int64_t n = static_cast<std::int64_t>(n_);
  member_wait_ms_ = settings_.quorum == composite_quorum::all ? wait_ms_ : std::max<std::int64_t>(wait_ms_ / n, 1);
  return begin_round(now_ns);
}

round_action composite_rounds::begin_round(std::int64_t now_ns) {
  for (std::size_t i = 0; i < n_; ++i) members_[i].state = member_state::untried;
  held_ = 0;
  failed_left_ = failed_limit();
  round_error_ = {};
  round_failed_with_error_ = false;
  round_permanent_error_ = {};
  round_start_ns_ = now_ns;
  next_ = 0;
  ++rounds_;
  return try_next(now_ns);
}

round_action composite_rounds::try_next(std::int64_t now_ns) {
  if (cancelled_) return round_failed({}, now_ns);
  if (next_ == n_) return all_tried(now_ns);
  std::int64_t wait = 0;
  if (deadline_ns_ >= 0) {
    wait = std::max<std::int64_t>(std::min(member_wait_ms_, remain_ms(now_ns)), 0);
  } else if (wait_ms_ > 0) {
    wait = member_wait_ms_;  // a wait too long for the clock: no deadline
  }
  members_[next_].state = member_state::trying;
  round_action a = act(round_action::kind::try_member);
  a.member = next_;
  a.wait_ms = wait;
  a.lease_ms = member_lease_ms_;
  return a;
}

round_action composite_rounds::member_answered(std::size_t i, std::error_code ec, bool acquired,
                                               std::int64_t now_ns) {
  if (finished_ || i >= n_ || i != next_ || members_[i].state != member_state::trying) return {};
  if (!ec && acquired) {
    members_[i].state = member_state::held;
    ++held_;
  } else {
    members_[i].state = ec ? member_state::failed : member_state::busy;
    if (ec) {
      round_failed_with_error_ = true;
      if (!round_error_) round_error_ = ec;
      if (permanent_error(ec) && !round_permanent_error_) round_permanent_error_ = ec;
    }
    if (cancelled_) return round_failed({}, now_ns);
    // The red lock's shortcut: a quorum is certain (or all that can be had), the rest is not tried.
    if (n_ - held_ == failed_limit()) return all_tried(now_ns);
    if (failed_left_ == 0) {
      if (settings_.quorum == composite_quorum::all) return round_failed(ec, now_ns);
      return round_failed(round_failed_with_error_ ? make_error_code(errc::quorum_not_reached) : std::error_code{},
                          now_ns);
    }
    --failed_left_;
  }
  if (deadline_ns_ >= 0 && now_ns >= deadline_ns_) return round_failed(no_time_error(), now_ns);
  ++next_;
  return try_next(now_ns);
}

std::error_code composite_rounds::no_time_error() const {
  if (!round_failed_with_error_) return {};
  return settings_.quorum == composite_quorum::all ? round_error_ : make_error_code(errc::quorum_not_reached);
}

// Every member tried, or the shortcut: enough held?
round_action composite_rounds::all_tried(std::int64_t now_ns) {
  if (held_ < needed()) return round_failed(no_time_error(), now_ns);
  // No wait: the members were taken for the lease itself (Redisson PEXPIREs anyway; it is a no-op).
  if (settings_.lease_ms == 0 || member_lease_ms_ == settings_.lease_ms) return report(now_ns);
  pending_ = 1;  // this step's own share, so the last answer cannot decide before all are asked
  for (std::size_t i = 0; i < n_; ++i) {
    if (members_[i].state != member_state::held) continue;
    members_[i].state = member_state::expiring;
    ++pending_;
  }
  round_action a = act(round_action::kind::set_leases);
  a.lease_ms = settings_.lease_ms;
  return a;
}

round_action composite_rounds::lease_set(std::size_t i, std::error_code ec, bool ours, std::int64_t now_ns) {
  if (finished_ || i >= n_ || members_[i].state != member_state::expiring) return {};
  if (ec || !ours) {
    members_[i].state = member_state::lapsed;  // gone, or unknown: released with the rest if the round fails
    --held_;
    round_failed_with_error_ = true;
    if (!round_error_) round_error_ = ec ? ec : make_error_code(errc::lease_lost);
  } else {
    members_[i].state = member_state::held;
  }
  return leases_done(now_ns);
}

round_action composite_rounds::leases_sent(std::int64_t now_ns) {
  if (finished_ || pending_ == 0) return {};
  return leases_done(now_ns);
}

round_action composite_rounds::leases_done(std::int64_t now_ns) {
  if (--pending_ > 0) return {};
  if (held_ < needed()) return round_failed(no_time_error(), now_ns);
  return report(now_ns);
}

round_action composite_rounds::report(std::int64_t now_ns) {
  if (settings_.quorum == composite_quorum::all) return finish({}, 1);
  std::int64_t lease = settings_.lease_ms;
  if (lease == 0) {  // the watchdogs' lease: the shortest among the members held
    for (std::size_t i = 0; i < n_; ++i) {
      if (members_[i].state != member_state::held) continue;
      const std::int64_t w = members_[i].watchdog_lease_ms;
      lease = lease == 0 ? w : std::min(lease, w);
    }
  }
  const std::int64_t drift = lease / 100 + 2;
  const std::int64_t validity = lease - (now_ns - round_start_ns_) / ms_to_ns - drift;
  if (validity > 0) return finish({}, validity);
  return round_failed({}, now_ns);
}

// Releases what the round may hold, then ends the try or starts another round.
round_action composite_rounds::round_failed(std::error_code ec, std::int64_t now_ns) {
  result_ec_ = ec;
  pending_ = 1;  // this step's own share, so the last release cannot decide before all are sent
  for (std::size_t i = 0; i < n_; ++i) {
    const member_state s = members_[i].state;
    const bool may_hold = s == member_state::held || s == member_state::lapsed;
    members_[i].state = may_hold ? member_state::releasing : member_state::untried;
    if (may_hold) ++pending_;
  }
  held_ = 0;
  if (pending_ == 1) return releases_done(now_ns);
  return act(round_action::kind::release);
}

round_action composite_rounds::released(std::size_t i, std::int64_t now_ns) {
  if (finished_ || i >= n_ || members_[i].state != member_state::releasing) return {};
  members_[i].state = member_state::untried;
  return releases_done(now_ns);
}

round_action composite_rounds::releases_sent(std::int64_t now_ns) {
  if (finished_ || pending_ == 0) return {};
  return releases_done(now_ns);
}

round_action composite_rounds::releases_done(std::int64_t now_ns) {
  if (--pending_ > 0) return {};
  if (cancelled_) return finish({}, 0, true);
  if (settings_.until_acquired) {
    if (round_permanent_error_) return finish(round_permanent_error_, 0);
    return pause_then(true, now_ns);
  }
  const std::error_code ec = result_ec_;
  if (permanent_error(ec) || wait_ms_ <= 0 || (deadline_ns_ >= 0 && now_ns >= deadline_ns_)) return finish(ec, 0);
  return pause_then(false, now_ns);
}

// A random pause before the next round (Redlock), never past a tryLock's deadline.
round_action composite_rounds::pause_then(bool new_try, std::int64_t now_ns) {
  std::int64_t cap = max_retry_pause_ms;
  if (deadline_ns_ >= 0 && !settings_.until_acquired) cap = std::min(cap, std::max<std::int64_t>(remain_ms(now_ns), 0));
  pause_starts_try_ = new_try;
  round_action a = act(round_action::kind::pause);
  a.wait_ms = random_between(0, cap + 1);
  return a;
}

round_action composite_rounds::pause_over(std::int64_t now_ns) {
  if (finished_) return {};
  if (cancelled_) return finish({}, 0, true);
  return pause_starts_try_ ? begin_try(now_ns) : begin_round(now_ns);
}

round_action composite_rounds::cancel() {
  if (finished_) return {};
  cancelled_ = true;
  return act(round_action::kind::cancel_members);
}

round_action composite_rounds::finish(std::error_code ec, std::int64_t value, bool aborted) {
  finished_ = true;
  round_action a = act(round_action::kind::finish);
  a.ec = ec;
  a.value = value;
  a.aborted = aborted;
  return a;
}

std::error_code unlock_verdict(composite_quorum q, const std::error_code* each, std::size_t n) {
  if (n == 0) return errc::invalid_config;
  std::error_code first;
  if (q == composite_quorum::all) {
    for (std::size_t i = 0; i < n; ++i) {
      if (each[i]) return each[i];
    }
    return first;
  }
  // Members not held by this owner answer not_owner; that is only news if none was held.
  bool any_released = false;
  for (std::size_t i = 0; i < n; ++i) {
    if (!each[i]) any_released = true;
    if (each[i] && each[i] != errc::not_owner && !first) first = each[i];
  }
  if (!first && !any_released) first = errc::not_owner;
  return first;
}

validity_verdict valid_for_verdict(composite_quorum q, std::int64_t* each_ms, std::size_t n,
                                   std::error_code first_error) {
  if (n == 0) return {make_error_code(errc::invalid_config), 0};
  // Valid while the members the composite needs are: all of them, or a majority.
  const std::size_t place = members_needed(q, n) - 1;
  std::nth_element(each_ms, each_ms + place, each_ms + n, [](std::int64_t a, std::int64_t b) { return a > b; });
  const std::int64_t valid = each_ms[place];
  return {valid > 0 ? std::error_code() : first_error, valid};
}

}  // namespace deadbolt::detail
