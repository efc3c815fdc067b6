// The wait driver, driven without sockets or clocks: every path a wait can take (acquired at once,
// parked and woken, out of time, a lost reply verified, an outage ridden out, LOADING / BUSY, cancel
// in each state, shutdown, a fair-lock trace left behind) and the bounds of each park and sleep.
#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <ostream>
#include <system_error>

#include "deadbolt/error.hpp"
#include "wait/wait_driver.hpp"

namespace detail = deadbolt::detail;
using deadbolt::errc;
using detail::step_role;
using detail::wait_action;
using detail::wait_outcome;
using detail::wait_step;
using kind = wait_action::kind;
using wake = detail::wait_driver::wake;

namespace {

constexpr std::int64_t ms = 1'000'000;

detail::wait_moment at(std::int64_t now_ms, bool stopped = false, bool closed = false) {
  return {now_ms * ms, stopped, closed};
}

// A lock-like kind: parks, verifies a lost attempt, bounds a park only by the attempt's answer.
detail::wait_rules lock_rules() {
  detail::wait_rules r;
  r.verifiable = true;
  r.first = {step_role::attempt, 1, false};
  r.verify = {step_role::check, 2, false};
  r.leave = {step_role::leave, 3, false};
  return r;
}

detail::wait_rules fair_rules() {
  detail::wait_rules r = lock_rules();
  r.leaves_trace = true;
  r.recheck_caps_park = true;
  return r;
}

const wait_step prepare_step{step_role::prepare, 4, false};
const wait_step refresh_step{step_role::check, 5, false};

detail::wait_driver::failure lost_reply() { return {errc::outcome_unknown, true, true}; }
detail::wait_driver::failure not_sent() { return {errc::not_connected, false, true}; }

void require_send(const wait_action& a, const wait_step& s) {
  REQUIRE(a.what == kind::send);
  CHECK(a.step == s);
}

void require_finish(const wait_action& a, std::error_code ec, std::int64_t value) {
  REQUIRE(a.what == kind::finish);
  CHECK(a.ec == ec);
  CHECK(a.value == value);
}

}  // namespace

TEST_CASE("wait driver: an attempt that acquires finishes with its value, for the kind to keep") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  require_send(d.start(at(0), rules, 1'000), rules.first);
  const wait_action a = d.replied(at(1), wait_outcome::acquired(42));
  require_finish(a, {}, 42);
  CHECK(a.acquired);
  CHECK_FALSE(a.give_back);
  CHECK_FALSE(a.aborted);
}

TEST_CASE("wait driver: a single attempt that finds it busy ends not acquired, without parking") {
  detail::wait_driver d;
  require_send(d.start(at(0), fair_rules(), 0), fair_rules().first);
  const wait_action a = d.replied(at(1), wait_outcome::busy(300));
  require_finish(a, {}, 0);
  CHECK_FALSE(a.acquired);
}

TEST_CASE("wait driver: a busy answer parks for min(its bound, the recheck cap, the time left)") {
  detail::wait_driver d;
  const auto rules = fair_rules();  // caps parks at 5 s
  d.start(at(0), rules, 8'000);
  wait_action a = d.replied(at(0), wait_outcome::busy(300));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 300 * ms);
  require_send(d.woken(at(300), wake::hint), rules.first);
  a = d.replied(at(300), wait_outcome::busy(60'000));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 5'000 * ms);  // the cap
  require_send(d.woken(at(5'300), wake::hint), rules.first);
  a = d.replied(at(7'000), wait_outcome::busy(-1));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 1'000 * ms);  // what is left of the wait
}

TEST_CASE("wait driver: no bound from the attempt parks for the recheck interval; a lock's TTL is not capped") {
  detail::wait_driver d;
  auto rules = lock_rules();
  rules.recheck_ms = 5'000;
  d.start(at(0), rules, -1);
  wait_action a = d.replied(at(0), wait_outcome::busy(-1));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 5'000 * ms);
  d.woken(at(5'000), wake::hint);
  a = d.replied(at(5'000), wait_outcome::busy(30'000));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 30'000 * ms);
}

TEST_CASE("wait driver: a hostile bound cannot overflow a park") {
  detail::wait_driver d;
  d.start(at(0), lock_rules(), -1);
  const wait_action a = d.replied(at(0), wait_outcome::busy(std::numeric_limits<std::int64_t>::max()));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns > 0);
  CHECK(a.wait_ns == (std::int64_t{1} << 40) * ms);
}

TEST_CASE("wait driver: a wait too long for the clock has no deadline") {
  detail::wait_driver d;
  d.start(at(1'000), lock_rules(), std::numeric_limits<std::int64_t>::max());
  const wait_action a = d.replied(at(1'000'000'000), wait_outcome::busy(100));
  REQUIRE(a.what == kind::park);
  CHECK(a.wait_ns == 100 * ms);
}

TEST_CASE("wait driver: a bound of 0 tries again at once, without parking") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  d.start(at(0), rules, 1'000);
  require_send(d.replied(at(1), wait_outcome::busy(0)), rules.first);
}

TEST_CASE("wait driver: the park carries the message count seen when the attempt was sent") {
  detail::wait_driver d;
  d.start(at(0), lock_rules(), 1'000);
  d.attempt_sent(7);
  const wait_action a = d.replied(at(1), wait_outcome::busy(500));
  REQUIRE(a.what == kind::park);
  CHECK(a.seen == 7);  // a message that came in between wakes the waiter at once
}

TEST_CASE("wait driver: a new waiter queues behind this client's others first, with the count seen at start") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  wait_action a = d.start(at(0), rules, 1'000, nullptr, true, 3);
  REQUIRE(a.what == kind::park);
  CHECK(a.seen == 3);
  CHECK(a.wait_ns == 1'000 * ms);  // never past the deadline
  require_send(d.woken(at(10), wake::hint), rules.first);
  // A single attempt never queues.
  detail::wait_driver single;
  require_send(single.start(at(0), rules, 0, nullptr, true, 3), rules.first);
}

TEST_CASE("wait driver: past the deadline a busy answer ends the wait not acquired") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  d.start(at(0), rules, 1'000);
  REQUIRE(d.replied(at(1), wait_outcome::busy(2'000)).what == kind::park);
  require_send(d.woken(at(1'000), wake::hint), rules.first);
  require_finish(d.replied(at(1'001), wait_outcome::busy(2'000)), {}, 0);
}

TEST_CASE("wait driver: a lost attempt reply is verified, never sent again") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  d.start(at(0), rules, 1'000);
  require_send(d.failed(at(1), lost_reply()), rules.verify);
  SUBCASE("it ran: acquired") {
    const wait_action a = d.replied(at(2), wait_outcome::acquired(1));
    require_finish(a, {}, 1);
    CHECK(a.acquired);
  }
  SUBCASE("it did not run: the attempt is made again") {
    require_send(d.replied(at(2), wait_outcome::retry()), rules.first);
  }
  SUBCASE("checks chain: verify, then a refresh, then acquired") {
    require_send(d.replied(at(2), wait_outcome::next(refresh_step)), refresh_step);
    require_finish(d.replied(at(3), wait_outcome::acquired(1)), {}, 1);
  }
  SUBCASE("the check fails too: unknown, for the kind to note") {
    const wait_action a = d.failed(at(2), lost_reply());
    require_finish(a, errc::outcome_unknown, 0);
    CHECK(a.unknown);
  }
  SUBCASE("the check's reply cannot be read: unknown") {
    const wait_action a = d.replied(at(2), wait_outcome::unknown());
    require_finish(a, errc::outcome_unknown, 0);
    CHECK(a.unknown);
  }
  SUBCASE("a check refused with LOADING is asked again, even cancelled and out of time") {
    d.cancel();
    const wait_action a = d.replied(at(5'000), wait_outcome::failed(errc::server_busy));
    REQUIRE(a.what == kind::sleep);
    CHECK(a.wait_ns == 250 * ms);
    require_send(d.timer_fired(at(5'250), true), rules.verify);
  }
}

TEST_CASE("wait driver: without a verify step a lost attempt reply is reported unknown") {
  detail::wait_driver d;
  detail::wait_rules rules;  // a semaphore acquire: permits have no owner to ask about
  d.start(at(0), rules, 1'000);
  const wait_action a = d.failed(at(1), lost_reply());
  require_finish(a, errc::outcome_unknown, 0);
  CHECK(a.unknown);
}

TEST_CASE("wait driver: a step safe to repeat is sent again after a lost reply, within the wait") {
  detail::wait_driver d;
  detail::wait_rules rules;
  rules.first = {step_role::attempt, 1, true};  // a latch's await reads the count
  d.start(at(0), rules, 1'000);
  require_send(d.failed(at(1), lost_reply()), rules.first);
  require_finish(d.failed(at(1'000), lost_reply()), errc::outcome_unknown, 0);  // out of time
}

TEST_CASE("wait driver: an outage is ridden out once the wait has waited, until its deadline") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  SUBCASE("not yet waited, a known reason (refused): the error is the answer") {
    d.start(at(0), rules, 1'000);
    const detail::wait_driver::failure refused{std::make_error_code(std::errc::connection_refused), false, true};
    require_finish(d.failed(at(1), refused), refused.ec, 0);
  }
  SUBCASE("not yet waited, never sent for want of a connection: sent again within the wait, once") {
    d.start(at(0), rules, 1'000);
    require_send(d.failed(at(1), not_sent()), rules.first);
    require_finish(d.failed(at(999), not_sent()), errc::not_connected, 0);
    d.start(at(0), rules, 1'000);
    require_send(d.failed(at(1), not_sent()), rules.first);
    require_finish(d.failed(at(1'000), not_sent()), errc::not_connected, 0);
  }
  SUBCASE("no deadline (lock()): never sent is sent again once, not for ever; a single attempt (try_lock()) hears it") {
    d.start(at(0), rules, -1);
    require_send(d.failed(at(3'000), not_sent()), rules.first);
    require_finish(d.failed(at(6'000), not_sent()), errc::not_connected, 0);
    detail::wait_driver single;
    single.start(at(0), rules, 0);
    require_finish(single.failed(at(1), not_sent()), errc::not_connected, 0);
  }
  SUBCASE("after a park: sent again") {
    d.start(at(0), rules, 1'000);
    d.replied(at(1), wait_outcome::busy(100));
    d.woken(at(101), wake::hint);
    require_send(d.failed(at(102), not_sent()), rules.first);
    require_finish(d.failed(at(1'000), not_sent()), errc::not_connected, 0);
  }
  SUBCASE("a check after a park is asked again rather than reported unknown") {
    d.start(at(0), rules, 1'000);
    d.replied(at(1), wait_outcome::busy(100));
    d.woken(at(101), wake::hint);
    require_send(d.failed(at(102), lost_reply()), rules.verify);
    require_send(d.failed(at(103), lost_reply()), rules.verify);
    const wait_action a = d.failed(at(1'000), lost_reply());  // out of time
    require_finish(a, errc::outcome_unknown, 0);
    CHECK(a.unknown);
  }
}

TEST_CASE("wait driver: LOADING / BUSY before the attempt ran is asked again after a pause, within the wait") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  d.start(at(0), rules, 1'000);
  wait_action a = d.replied(at(900), wait_outcome::failed(errc::server_busy));
  REQUIRE(a.what == kind::sleep);
  CHECK(a.wait_ns == 100 * ms);  // not past the deadline
  require_send(d.timer_fired(at(1'000), false), rules.first);
  require_finish(d.replied(at(1'000), wait_outcome::failed(errc::server_busy)), errc::server_busy, 0);
  // A single attempt hears the refusal.
  detail::wait_driver single;
  single.start(at(0), rules, 0);
  require_finish(single.replied(at(1), wait_outcome::failed(errc::server_busy)), errc::server_busy, 0);
}

TEST_CASE("wait driver: a prepare step goes first, once") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  require_send(d.start(at(0), rules, 1'000, &prepare_step), prepare_step);
  require_send(d.replied(at(1), wait_outcome::next(rules.first)), rules.first);
  d.replied(at(2), wait_outcome::busy(100));
  require_send(d.woken(at(102), wake::hint), rules.first);
  // A lost prepare reply is not an unanswered attempt: no verify.
  detail::wait_driver p;
  p.start(at(0), rules, 1'000, &prepare_step);
  require_finish(p.failed(at(1), lost_reply()), errc::outcome_unknown, 0);
}

TEST_CASE("wait driver: a kind that does not park sleeps its own pause, bounded by the deadline") {
  detail::wait_driver d;
  auto rules = lock_rules();
  rules.parks = false;  // the spin lock
  d.start(at(0), rules, 1'000);
  wait_action a = d.replied(at(0), wait_outcome::busy(40));
  REQUIRE(a.what == kind::sleep);
  CHECK(a.wait_ns == 40 * ms);
  require_send(d.timer_fired(at(40), false), rules.first);
  a = d.replied(at(990), wait_outcome::busy(40));
  REQUIRE(a.what == kind::sleep);
  CHECK(a.wait_ns == 10 * ms);
}

TEST_CASE("wait driver: cancel in each state") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  SUBCASE("parked: unparked, and the wake-up ends it aborted") {
    d.start(at(0), rules, -1);
    d.replied(at(1), wait_outcome::busy(100));
    CHECK(d.cancel() == detail::wait_driver::cancel_effect::unpark);
    const wait_action a = d.woken(at(2), wake::cancelled);
    require_finish(a, {}, 0);
    CHECK(a.aborted);
  }
  SUBCASE("sleeping: the timer is stopped, and its handler ends it aborted") {
    d.start(at(0), rules, -1);
    d.replied(at(1), wait_outcome::failed(errc::server_busy));
    CHECK(d.cancel() == detail::wait_driver::cancel_effect::stop_timer);
    const wait_action a = d.timer_fired(at(2), true);
    require_finish(a, {}, 0);
    CHECK(a.aborted);
  }
  SUBCASE("in flight and then acquired: given back") {
    d.start(at(0), rules, -1);
    CHECK(d.cancel() == detail::wait_driver::cancel_effect::none);
    const wait_action a = d.replied(at(1), wait_outcome::acquired(1));
    require_finish(a, {}, 0);
    CHECK(a.aborted);
    CHECK(a.acquired);
    CHECK(a.give_back);
  }
  SUBCASE("in flight and then busy: ends aborted without parking") {
    d.start(at(0), rules, -1);
    d.cancel();
    const wait_action a = d.replied(at(1), wait_outcome::busy(100));
    require_finish(a, {}, 0);
    CHECK(a.aborted);
  }
  SUBCASE("in flight and a plain answer: the answer stands") {
    d.start(at(0), rules, -1);
    d.cancel();
    const wait_action a = d.replied(at(1), wait_outcome::done(1));
    require_finish(a, {}, 1);
    CHECK_FALSE(a.aborted);
  }
}

TEST_CASE("wait driver: a fair waiter that ends without the lock leaves the queue first") {
  detail::wait_driver d;
  const auto rules = fair_rules();
  SUBCASE("out of time") {
    d.start(at(0), rules, 100);
    d.replied(at(1), wait_outcome::busy(50));
    d.woken(at(100), wake::hint);
    require_send(d.replied(at(101), wait_outcome::busy(50)), rules.leave);
    require_finish(d.replied(at(102), wait_outcome::done(1)), {}, 0);
  }
  SUBCASE("cancelled: the leave step's answer ends it aborted") {
    d.start(at(0), rules, -1);
    d.replied(at(1), wait_outcome::busy(50));
    d.cancel();
    require_send(d.woken(at(2), wake::cancelled), rules.leave);
    const wait_action a = d.failed(at(3), not_sent());  // best effort
    require_finish(a, {}, 0);
    CHECK(a.aborted);
  }
  SUBCASE("an unanswered attempt may have queued: unknown, after leaving") {
    d.start(at(0), rules, -1);
    require_send(d.failed(at(1), lost_reply()), rules.verify);
    require_send(d.failed(at(2), lost_reply()), rules.leave);
    const wait_action a = d.replied(at(3), wait_outcome::done(1));
    require_finish(a, errc::outcome_unknown, 0);
    CHECK(a.unknown);
  }
  SUBCASE("a single try never queued: nothing to leave") {
    d.start(at(0), rules, 0);
    require_finish(d.replied(at(1), wait_outcome::busy(50)), {}, 0);
  }
}

TEST_CASE("wait driver: shutdown ends a wait, and gives back what an in-flight attempt took") {
  detail::wait_driver d;
  const auto rules = fair_rules();
  SUBCASE("parked") {
    d.start(at(0), rules, -1);
    d.replied(at(1), wait_outcome::busy(50));
    require_send(d.woken(at(2, true), wake::shutdown), rules.leave);  // leaves the queue first
    require_finish(d.replied(at(3, true), wait_outcome::done(1)), errc::shutting_down, 0);
  }
  SUBCASE("parked, connections already closed") {
    d.start(at(0), rules, -1);
    d.replied(at(1), wait_outcome::busy(50));
    require_finish(d.woken(at(2, true, true), wake::shutdown), errc::shutting_down, 0);
  }
  SUBCASE("acquired meanwhile") {
    d.start(at(0), rules, -1);
    const wait_action a = d.replied(at(1, true), wait_outcome::acquired(1));
    require_finish(a, errc::shutting_down, 0);
    CHECK(a.give_back);
  }
  SUBCASE("a busy answer") {
    d.start(at(0), lock_rules(), -1);
    require_finish(d.replied(at(1, true), wait_outcome::busy(50)), errc::shutting_down, 0);
  }
}

TEST_CASE("wait driver: events that do not belong to the current state are ignored") {
  detail::wait_driver d;
  const auto rules = lock_rules();
  d.start(at(0), rules, -1);
  CHECK(d.timer_fired(at(1), false).what == kind::none);
  CHECK(d.woken(at(1), wake::hint).what == kind::none);
  d.replied(at(1), wait_outcome::busy(100));
  CHECK(d.replied(at(2), wait_outcome::acquired(1)).what == kind::none);
  CHECK(d.failed(at(2), not_sent()).what == kind::none);
}

TEST_CASE("wait driver: a park the subscriber refuses ends the wait with its error, after leaving") {
  detail::wait_driver d;
  const auto rules = fair_rules();
  d.start(at(0), rules, -1);
  REQUIRE(d.replied(at(1), wait_outcome::busy(50)).what == kind::park);
  require_send(d.park_failed(at(1), errc::waiter_table_full), rules.leave);
  require_finish(d.replied(at(2), wait_outcome::done(1)), errc::waiter_table_full, 0);
}

namespace {

detail::wait_rules synced_rules(int retries) {
  detail::wait_rules r = lock_rules();
  r.syncs_replicas = true;
  r.undo = {step_role::undo, 6, true};
  r.sync_retries = retries;
  r.sync_retry_delay_ms = 1'000;
  return r;
}

}  // namespace

TEST_CASE("wait driver: an unsynced acquire is undone, paused (jittered, 1-2 delays) and tried again; then replicas_not_synced") {
  detail::wait_driver d;
  const auto rules = synced_rules(2);
  require_send(d.start(at(0), rules, 0), rules.first);  // a try_lock: retries go on regardless of its wait
  require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
  wait_action pause = d.replied(at(2), wait_outcome::done(0));
  REQUIRE(pause.what == kind::sleep);
  CHECK(pause.wait_ns >= 1'000 * ms);  // the first (as Redisson's): the delay, plus up to as much again
  CHECK(pause.wait_ns <= 2'000 * ms);
  require_send(d.timer_fired(at(1'900), false), rules.first);
  require_send(d.replied(at(1'901), wait_outcome::acquired(1), true), rules.undo);
  pause = d.replied(at(1'902), wait_outcome::done(0));
  REQUIRE(pause.what == kind::sleep);
  CHECK(pause.wait_ns >= 1'000 * ms);  // and every later one
  CHECK(pause.wait_ns <= 2'000 * ms);
  require_send(d.timer_fired(at(3'900), false), rules.first);
  require_send(d.replied(at(3'901), wait_outcome::acquired(1), true), rules.undo);  // retries spent: undone all the same
  const wait_action end = d.replied(at(3'902), wait_outcome::done(0));
  require_finish(end, errc::replicas_not_synced, 0);
  CHECK_FALSE(end.acquired);
  CHECK_FALSE(end.unknown);
}

TEST_CASE("wait driver: a synced retry that acquires finishes acquired; one that finds it busy ends as busy would") {
  const auto rules = synced_rules(4);
  SUBCASE("acquired on the second try") {
    detail::wait_driver d;
    require_send(d.start(at(0), rules, 0), rules.first);
    require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
    REQUIRE(d.replied(at(2), wait_outcome::done(0)).what == kind::sleep);
    require_send(d.timer_fired(at(1'000), false), rules.first);
    const wait_action a = d.replied(at(1'001), wait_outcome::acquired(1));
    require_finish(a, {}, 1);
    CHECK(a.acquired);
  }
  SUBCASE("taken by another meanwhile: a try_lock answers not acquired") {
    detail::wait_driver d;
    require_send(d.start(at(0), rules, 0), rules.first);
    require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
    REQUIRE(d.replied(at(2), wait_outcome::done(0)).what == kind::sleep);
    require_send(d.timer_fired(at(1'000), false), rules.first);
    require_finish(d.replied(at(1'001), wait_outcome::busy(5'000)), {}, 0);
  }
}

TEST_CASE("wait driver: cancel or shutdown around an unsynced acquire ends once it is undone") {
  const auto rules = synced_rules(4);
  SUBCASE("cancelled while the attempt was in flight: undone, then aborted, no retry") {
    detail::wait_driver d;
    require_send(d.start(at(0), rules, 5'000), rules.first);
    CHECK(d.cancel() == detail::wait_driver::cancel_effect::none);
    require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
    const wait_action end = d.replied(at(2), wait_outcome::done(0));
    REQUIRE(end.what == kind::finish);
    CHECK(end.aborted);
    CHECK_FALSE(end.acquired);  // nothing to give back: the undo did
  }
  SUBCASE("cancelled during the pause: aborted at once") {
    detail::wait_driver d;
    require_send(d.start(at(0), rules, 5'000), rules.first);
    require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
    REQUIRE(d.replied(at(2), wait_outcome::done(0)).what == kind::sleep);
    CHECK(d.cancel() == detail::wait_driver::cancel_effect::stop_timer);
    const wait_action end = d.timer_fired(at(3), true);
    REQUIRE(end.what == kind::finish);
    CHECK(end.aborted);
  }
  SUBCASE("shutdown: undone, then shutting_down") {
    detail::wait_driver d;
    require_send(d.start(at(0), rules, 5'000), rules.first);
    require_send(d.replied(at(1, true), wait_outcome::acquired(1), true), rules.undo);
    require_finish(d.replied(at(2, true), wait_outcome::done(0)), errc::shutting_down, 0);
  }
}

TEST_CASE("wait driver: an undo whose reply is lost is sent again (twice at most), then the outcome is unknown") {
  const auto rules = synced_rules(4);
  detail::wait_driver d;
  require_send(d.start(at(0), rules, 5'000), rules.first);
  require_send(d.replied(at(1), wait_outcome::acquired(1), true), rules.undo);
  require_send(d.failed(at(2), lost_reply()), rules.undo);  // the same latch: safe to repeat
  require_send(d.failed(at(3), lost_reply()), rules.undo);
  const wait_action end = d.failed(at(4), lost_reply());
  require_finish(end, errc::outcome_unknown, 0);
  CHECK(end.unknown);  // the kind notes it: the owner's next unlock releases what the server counts

  SUBCASE("an undo that may not be repeated (a semaphore's release) is unknown at once") {
    auto once = rules;
    once.undo.idempotent = false;
    detail::wait_driver d2;
    require_send(d2.start(at(0), once, 5'000), once.first);
    require_send(d2.replied(at(1), wait_outcome::acquired(1), true), once.undo);
    const wait_action e2 = d2.failed(at(2), lost_reply());
    require_finish(e2, errc::outcome_unknown, 0);
    CHECK(e2.unknown);
  }
}

namespace {

// A lock's acquire with replica sync: a found hold is written again by the confirm step (refresh).
detail::wait_rules confirming_rules(int retries) {
  detail::wait_rules r = synced_rules(retries);
  r.confirms = true;
  r.confirm = refresh_step;
  return r;
}

const wait_step fetch_token_step{step_role::check, 7, false};

}  // namespace

TEST_CASE("wait driver: the attempt and the confirm step are followed by WAIT; the others are not") {
  const auto rules = confirming_rules(4);
  detail::wait_driver d;
  const wait_action first = d.start(at(0), rules, 5'000, &prepare_step);
  require_send(first, prepare_step);
  CHECK_FALSE(first.sync);
  const wait_action attempt = d.replied(at(1), wait_outcome::next(rules.first));
  require_send(attempt, rules.first);
  CHECK(attempt.sync);
  const wait_action verify = d.failed(at(2), lost_reply());
  require_send(verify, rules.verify);
  CHECK_FALSE(verify.sync);
  const wait_action confirm = d.replied(at(3), wait_outcome::next(refresh_step));
  require_send(confirm, refresh_step);
  CHECK(confirm.sync);
  const wait_action undo = d.replied(at(4), wait_outcome::acquired(1), true);
  require_send(undo, rules.undo);
  CHECK_FALSE(undo.sync);  // a replica that gets the write gets the undo after it

  SUBCASE("replica sync off: nothing is") {
    auto off = rules;
    off.syncs_replicas = false;
    detail::wait_driver d2;
    const wait_action a = d2.start(at(0), off, 5'000);
    require_send(a, off.first);
    CHECK_FALSE(a.sync);
    require_send(d2.failed(at(1), lost_reply()), off.verify);
    const wait_action c = d2.replied(at(2), wait_outcome::next(refresh_step));
    require_send(c, refresh_step);
    CHECK_FALSE(c.sync);
    CHECK(d2.replied(at(3), wait_outcome::acquired(1)).acquired);
  }
}

TEST_CASE("wait driver: a hold found by the check of a lost reply is judged by the WAIT after its confirm step") {
  const auto rules = confirming_rules(4);
  detail::wait_driver d;
  require_send(d.start(at(0), rules, -1), rules.first);  // lock(): no deadline
  require_send(d.failed(at(1), lost_reply()), rules.verify);
  require_send(d.replied(at(2), wait_outcome::next(refresh_step)), refresh_step);

  SUBCASE("no replica acknowledged it: undone, paused, tried again like a fresh unsynced hold") {
    require_send(d.replied(at(3), wait_outcome::acquired(1), true), rules.undo);
    const wait_action pause = d.replied(at(4), wait_outcome::done(0));
    REQUIRE(pause.what == kind::sleep);
    CHECK(pause.wait_ns >= 1'000 * ms);
    require_send(d.timer_fired(at(2'000), false), rules.first);
    const wait_action a = d.replied(at(2'001), wait_outcome::acquired(1));
    require_finish(a, {}, 1);
    CHECK(a.acquired);
  }
  SUBCASE("a fenced hold: undone before its token is read") {
    require_send(d.replied(at(3), wait_outcome::next(fetch_token_step), true), rules.undo);
  }
  SUBCASE("acknowledged: kept, with what the check chain reads after it") {
    require_send(d.replied(at(3), wait_outcome::next(fetch_token_step)), fetch_token_step);
    const wait_action a = d.replied(at(4), wait_outcome::acquired(17));
    require_finish(a, {}, 17);
    CHECK(a.acquired);
  }
  SUBCASE("lapsed between the check and the confirm: a new attempt, WAIT or not") {
    require_send(d.replied(at(3), wait_outcome::busy(0), true), rules.first);
  }
}

TEST_CASE("wait driver: with no confirm step, a hold a check found is given back and tried again (a read is never synced)") {
  const auto rules = synced_rules(4);  // a permit acquire: its verify (ZRANK) writes nothing
  detail::wait_driver d;
  require_send(d.start(at(0), rules, 5'000), rules.first);
  require_send(d.failed(at(1), lost_reply()), rules.verify);
  require_send(d.replied(at(2), wait_outcome::acquired(1)), rules.undo);
  REQUIRE(d.replied(at(3), wait_outcome::done(0)).what == kind::sleep);
  require_send(d.timer_fired(at(1'000), false), rules.first);
  CHECK(d.replied(at(1'001), wait_outcome::acquired(1)).acquired);  // synced: the WAIT after it acknowledged
}

TEST_CASE("wait driver: an attempt that found it busy parks as usual whatever its WAIT said (it took nothing)") {
  const auto rules = synced_rules(4);
  detail::wait_driver d;
  require_send(d.start(at(0), rules, 5'000), rules.first);
  CHECK(d.replied(at(1), wait_outcome::busy(100), true).what == kind::park);
}
