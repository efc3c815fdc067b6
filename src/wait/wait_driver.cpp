#include "wait/wait_driver.hpp"

#include <algorithm>
#include <limits>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::int64_t ns_per_ms = 1'000'000;
// No park or sleep is longer than this (2^40 ms, about 35 years): a hostile TTL cannot overflow.
constexpr std::int64_t longest_wait_ms = std::int64_t{1} << 40;

std::int64_t to_ns(std::int64_t ms) { return std::clamp<std::int64_t>(ms, 0, longest_wait_ms) * ns_per_ms; }

wait_action nothing() {
  wait_action a;
  a.what = wait_action::kind::none;
  return a;
}

bool waiting_step(const wait_step& s) { return s.role == step_role::attempt || s.role == step_role::prepare; }

}  // namespace

wait_action wait_driver::start(const wait_moment& m, const wait_rules& rules, std::int64_t wait_ms,
                               const wait_step* prepare, bool queue_first, std::uint64_t seen) {
  rules_ = rules;
  state_ = state::idle;
  single_ = wait_ms == 0;
  cancelled_ = false;
  waited_ = false;
  unsent_resends_ = 0;
  trace_ = false;
  outcome_ = {};
  outcome_aborted_ = false;
  unknown_ = false;
  confirmed_ = true;
  unsynced_ = 0;
  undo_resends_ = 0;
  retry_after_undo_ = false;
  seen_ = seen;
  prepare_pending_ = prepare != nullptr;
  if (prepare != nullptr) prepare_ = *prepare;
  const bool representable = wait_ms <= (std::numeric_limits<std::int64_t>::max() - m.now_ns) / ns_per_ms;
  deadline_ns_ = wait_ms < 0 || !representable ? -1 : m.now_ns + wait_ms * ns_per_ms;
  if (queue_first && !single_) return park(m, rules_.recheck_ms);
  return begin_attempt();
}

wait_action wait_driver::begin_attempt() { return send(prepare_pending_ ? prepare_ : rules_.first); }

wait_action wait_driver::send(const wait_step& s) {
  current_ = s;
  state_ = state::sending;
  if (s.role == step_role::attempt) confirmed_ = !rules_.syncs_replicas;  // nothing taken yet
  wait_action a;
  a.what = wait_action::kind::send;
  a.step = s;
  a.sync = syncs(s);
  return a;
}

bool wait_driver::syncs(const wait_step& s) const {
  return rules_.syncs_replicas && (s.role == step_role::attempt || (rules_.confirms && s == rules_.confirm));
}

wait_action wait_driver::replied(const wait_moment& m, const wait_outcome& o, bool no_replica) {
  if (state_ != state::sending) return nothing();
  const wait_step s = current_;
  if (s.role == step_role::leave) return finish(outcome_, 0, outcome_aborted_);  // best effort
  if (s.role == step_role::undo) return undone(m);  // whatever it answered: what was taken is gone
  if (syncs(s)) {
    // The WAIT after a write of what the attempt took (the attempt itself, or the confirm step's
    // write of a hold a check found) answered: on a replica, or to be given back.
    const bool holds = o.what == wait_outcome::kind::acquired || o.what == wait_outcome::kind::next;
    if (no_replica && holds) return unsynced(m);
    confirmed_ = confirmed_ || !no_replica;
  }
  switch (o.what) {
    case wait_outcome::kind::acquired:
      // Found by a check of an unanswered attempt with no write of it acknowledged since: a failover
      // could lose it as surely as an unsynced attempt's.
      if (!confirmed_) return unsynced(m);
      return acquired(m, o.value);
    case wait_outcome::kind::done: return finish({}, o.value);
    case wait_outcome::kind::busy:
      if (s.role == step_role::attempt) note_trace();
      return busy(m, o.wait_ms);
    case wait_outcome::kind::retry: return begin_attempt();
    case wait_outcome::kind::next:
      if (s.role == step_role::prepare) prepare_pending_ = false;
      return send(o.step);
    case wait_outcome::kind::unknown: return unknown(m);
    case wait_outcome::kind::failed: break;
  }
  // Refused before it ran (LOADING, BUSY): a waiter asks again within its wait; a check that must
  // resolve an unanswered attempt asks again regardless.
  if (o.ec == errc::server_busy && (s.role == step_role::check || (!single_ && !cancelled_ && before_deadline(m)))) {
    return sleep(m, rules_.busy_retry_ms, s);
  }
  return not_acquired(m, o.ec);
}

wait_action wait_driver::failed(const wait_moment& m, const failure& f) {
  if (state_ != state::sending) return nothing();
  const wait_step s = current_;
  if (s.role == step_role::leave) return finish(outcome_, 0, outcome_aborted_);
  if (s.role == step_role::undo) return undo_failed(m, f);
  if (s.role == step_role::attempt && f.ambiguous && !s.idempotent) {
    // It may have run: ask instead of running it again (Redisson #7367), or say we cannot know.
    note_trace();
    return rules_.verifiable ? send(rules_.verify) : unknown(m);
  }
  // Never sent, and no connection attempt has failed yet (it was still being made: the sentinels
  // still being asked, the slot's master not yet known): nothing happened, so the step simply goes
  // again, within the wait, even before it has waited. A known reason (refused, no such master) is
  // the answer of a first attempt.
  const bool resend_unsent = f.ec == errc::not_connected && unsent_resends_ < max_unsent_resends;
  if (f.transient && (waited_ || s.idempotent || resend_unsent) && !single_ && !cancelled_ && !m.stopped &&
      before_deadline(m)) {
    if (!waited_ && !s.idempotent) ++unsent_resends_;
    // A waiter keeps its place through an outage: the request waits for the connection to come
    // back. An unanswered attempt stays unanswered: its check is what is asked again.
    return waiting_step(s) ? begin_attempt() : send(s);
  }
  if (s.role == step_role::check && f.transient) return unknown(m);
  return not_acquired(m, f.ec);
}

wait_action wait_driver::woken(const wait_moment& m, wake why) {
  if (state_ != state::parked) return nothing();
  state_ = state::idle;
  switch (why) {
    case wake::shutdown: return not_acquired(m, errc::shutting_down);
    case wake::cancelled: return not_acquired(m, {}, true);
    case wake::hint: break;
  }
  return begin_attempt();  // a message, the timeout or a resubscription: look again (busy() ends a spent wait)
}

wait_action wait_driver::timer_fired(const wait_moment& m, bool aborted) {
  if (state_ != state::sleeping) return nothing();
  state_ = state::idle;
  if (!waiting_step(resume_)) return send(resume_);  // a check goes on to its answer, whatever happens
  if (m.stopped) return not_acquired(m, errc::shutting_down);
  if (aborted || cancelled_) return not_acquired(m, {}, true);
  return begin_attempt();
}

wait_action wait_driver::park_failed(const wait_moment& m, std::error_code ec) {
  if (state_ != state::parked) return nothing();
  state_ = state::idle;
  return not_acquired(m, ec);
}

wait_driver::cancel_effect wait_driver::cancel() {
  switch (state_) {
    case state::parked: return cancel_effect::unpark;  // woken(cancelled) ends it
    case state::sleeping: cancelled_ = true; return cancel_effect::stop_timer;
    case state::sending: cancelled_ = true; return cancel_effect::none;  // acted on when the reply comes
    case state::idle: break;
  }
  return cancel_effect::none;
}

wait_action wait_driver::busy(const wait_moment& m, std::int64_t wait_ms) {
  if (cancelled_) return not_acquired(m, {}, true);
  if (m.stopped) return not_acquired(m, errc::shutting_down);
  if (single_) return finish({}, 0);
  if (!before_deadline(m)) return not_acquired(m, {});
  if (wait_ms == 0) return begin_attempt();
  if (!rules_.parks) return sleep(m, wait_ms, rules_.first);
  std::int64_t bound = wait_ms < 0 ? rules_.recheck_ms : wait_ms;
  if (rules_.recheck_caps_park) bound = std::min(bound, rules_.recheck_ms);
  return park(m, bound);
}

wait_action wait_driver::park(const wait_moment& m, std::int64_t wait_ms) {
  state_ = state::parked;
  waited_ = true;
  wait_action a;
  a.what = wait_action::kind::park;
  a.wait_ns = bounded(m, to_ns(wait_ms));
  a.seen = seen_;
  return a;
}

wait_action wait_driver::sleep(const wait_moment& m, std::int64_t wait_ms, const wait_step& then) {
  state_ = state::sleeping;
  waited_ = true;
  resume_ = then;
  wait_action a;
  a.what = wait_action::kind::sleep;
  a.wait_ns = waiting_step(then) ? bounded(m, to_ns(wait_ms)) : to_ns(wait_ms);
  return a;
}

wait_action wait_driver::sleep_unbounded(std::int64_t wait_ms, const wait_step& then) {
  state_ = state::sleeping;
  waited_ = true;
  resume_ = then;
  wait_action a;
  a.what = wait_action::kind::sleep;
  a.wait_ns = to_ns(wait_ms);
  return a;
}

std::int64_t wait_driver::bounded(const wait_moment& m, std::int64_t wait_ns) const {
  if (deadline_ns_ >= 0) wait_ns = std::min(wait_ns, deadline_ns_ - m.now_ns);
  return std::max<std::int64_t>(wait_ns, 0);
}

void wait_driver::note_trace() { trace_ = trace_ || (rules_.leaves_trace && !single_); }

wait_action wait_driver::acquired(const wait_moment& m, std::int64_t value) {
  if (!cancelled_ && !m.stopped) {
    wait_action a = finish({}, value);
    a.acquired = true;
    return a;
  }
  // Taken, but nobody wants it any more: the kind gives it back (shutdown sends that before closing).
  wait_action a = m.stopped ? finish(errc::shutting_down, 0) : finish({}, 0, true);
  a.acquired = true;
  a.give_back = true;
  return a;
}

wait_action wait_driver::unsynced(const wait_moment& m) {
  // Taken, but no replica has it: a failover now would lose it without a word. Give it back (as
  // Redisson does), then try again after a pause, or report it once the tries are spent.
  retry_after_undo_ = !cancelled_ && !m.stopped && unsynced_ < rules_.sync_retries;
  ++unsynced_;
  undo_resends_ = 0;
  return send(rules_.undo);
}

wait_action wait_driver::undone(const wait_moment& m) {
  if (cancelled_) return finish({}, 0, true);
  if (m.stopped) return finish(errc::shutting_down, 0);
  if (!retry_after_undo_) return finish(errc::replicas_not_synced, 0);
  return sleep_unbounded(sync_pause_ms(m), rules_.first);  // a new try, whatever the deadline
}

wait_action wait_driver::undo_failed(const wait_moment& m, const failure& f) {
  // An undo that never ran, or that repeats safely (same latch), is sent again while the connection
  // can carry it; past that (or when it may have run and is not safe to repeat), the hold may
  // still be on the server: the outcome is unknown, which the kind notes (the owner's next unlock
  // releases whatever the server counts).
  const bool may_repeat = !f.ambiguous || rules_.undo.idempotent;
  if (f.transient && may_repeat && !m.closed && ++undo_resends_ <= 2) return send(rules_.undo);
  unknown_ = true;
  return finish(f.transient ? make_error_code(errc::outcome_unknown) : f.ec, 0);
}

std::int64_t wait_driver::sync_pause_ms(const wait_moment& m) const {
  // Redisson's default retryDelay, EqualJitterDelay(base, 2 * base): retry n >= 1 waits half of
  // min(base * 2^n, 2 * base) for sure, up to as much again. From the first retry on that is half of
  // 2 * base: base to 2 * base (1-2 s by default).
  const std::int64_t full = 2 * rules_.sync_retry_delay_ms;
  const std::int64_t half = full / 2;
  const auto noise = static_cast<std::uint64_t>(m.now_ns) * 0x9e3779b97f4a7c15ull;
  return half + (half > 0 ? static_cast<std::int64_t>((noise >> 33) % static_cast<std::uint64_t>(half + 1)) : 0);
}

wait_action wait_driver::unknown(const wait_moment& m) {
  unknown_ = true;
  return not_acquired(m, errc::outcome_unknown);
}

wait_action wait_driver::not_acquired(const wait_moment& m, std::error_code ec, bool aborted) {
  if (!trace_ || m.closed) return finish(ec, 0, aborted);
  trace_ = false;
  outcome_ = ec;
  outcome_aborted_ = aborted;
  return send(rules_.leave);
}

wait_action wait_driver::finish(std::error_code ec, std::int64_t value, bool aborted) {
  state_ = state::idle;
  wait_action a;
  a.what = wait_action::kind::finish;
  a.ec = ec;
  a.value = value;
  a.aborted = aborted;
  a.unknown = unknown_;
  return a;
}

}  // namespace deadbolt::detail
