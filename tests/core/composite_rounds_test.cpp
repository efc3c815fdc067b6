// The multi lock's and red lock's rounds, driven without sockets or clocks
// (src/composite/composite_rounds.hpp): all members granted, a member that refuses (give back, retry
// until the deadline), a red lock with a minority down, answers lost or unknown, a validity eaten by
// a slow round, cancellation at each step, a member granted after the caller gave up, lock()'s
// retries, and what unlock and valid_for report from the members' answers.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "composite/composite_rounds.hpp"
#include "deadbolt/error.hpp"

// A namespace of its own: the socket-free suites share one unity translation unit.
namespace composite_rounds_test {

namespace detail = deadbolt::detail;
using deadbolt::errc;
using detail::composite_quorum;
using detail::member_state;
using detail::round_action;
using kind = round_action::kind;

constexpr std::int64_t ms = 1'000'000;
const std::error_code refused = make_error_code(std::errc::connection_refused);
const std::error_code unknown = make_error_code(errc::outcome_unknown);
const std::error_code not_owner = make_error_code(errc::not_owner);

// The driver's side: the member records and the rounds over them (not copied: the rounds point at them).
struct composite {
  composite(composite_quorum q, std::size_t n, std::int64_t wait_ms, std::int64_t lease_ms,
            bool until_acquired = false, std::uint64_t seed = 7)
      : members(n), rounds(settings(q, wait_ms, lease_ms, until_acquired), members.data(), n, seed) {
    for (auto& m : members) m.watchdog_lease_ms = 30'000;
  }
  composite(const composite&) = delete;
  composite& operator=(const composite&) = delete;

  static detail::round_settings settings(composite_quorum q, std::int64_t wait_ms, std::int64_t lease_ms,
                                         bool until_acquired) {
    detail::round_settings s;
    s.quorum = q;
    s.wait_ms = wait_ms;
    s.lease_ms = lease_ms;
    s.until_acquired = until_acquired;
    return s;
  }

  // The members in `state` ("0,2"), as the driver's loop over a set_leases or release action finds them.
  std::string in(member_state state) const {
    std::string out;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (rounds.member(i) != state) continue;
      if (!out.empty()) out += ',';
      out += std::to_string(i);
    }
    return out;
  }

  // Answers every release of a release action (at `t` ms); the driver has sent them all.
  round_action releases_answered(std::int64_t t) {
    std::vector<std::size_t> releasing;
    for (std::size_t i = 0; i < members.size(); ++i) {
      if (rounds.member(i) == member_state::releasing) releasing.push_back(i);
    }
    REQUIRE_FALSE(releasing.empty());
    REQUIRE(rounds.releases_sent(t * ms).what == kind::none);
    round_action last;
    for (std::size_t i : releasing) last = rounds.released(i, t * ms);
    return last;
  }

  std::vector<detail::composite_member> members;
  detail::composite_rounds rounds;
};

void require_try(const round_action& a, std::size_t member, std::int64_t wait_ms, std::int64_t lease_ms) {
  REQUIRE(a.what == kind::try_member);
  CHECK(a.member == member);
  CHECK(a.wait_ms == wait_ms);
  CHECK(a.lease_ms == lease_ms);
}

void require_finish(const round_action& a, std::error_code ec, std::int64_t value) {
  REQUIRE(a.what == kind::finish);
  CHECK(a.ec == ec);
  CHECK(a.value == value);
  CHECK_FALSE(a.aborted);
}

void require_aborted(const round_action& a) {
  REQUIRE(a.what == kind::finish);
  CHECK(a.aborted);
  CHECK(a.value == 0);
}

TEST_CASE("composite: a multi lock whose members all grant finishes with 1, each member waiting the time left") {
  composite c(composite_quorum::all, 3, 1'000, 0);
  require_try(c.rounds.start(0), 0, 1'000, 0);  // no lease: the watchdogs
  CHECK(c.rounds.member(0) == member_state::trying);
  require_try(c.rounds.member_answered(0, {}, true, 100 * ms), 1, 900, 0);
  require_try(c.rounds.member_answered(1, {}, true, 250 * ms), 2, 750, 0);
  require_finish(c.rounds.member_answered(2, {}, true, 300 * ms), {}, 1);
  CHECK(c.in(member_state::held) == "0,1,2");
  CHECK(c.rounds.finished());
  CHECK(c.rounds.rounds() == 1);
}

TEST_CASE("composite: with a lease and a wait, members are taken for 2 x wait, then all set to the lease") {
  composite c(composite_quorum::all, 2, 500, 3'000);
  require_try(c.rounds.start(0), 0, 500, 1'000);
  require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 490, 1'000);
  const round_action a = c.rounds.member_answered(1, {}, true, 20 * ms);
  REQUIRE(a.what == kind::set_leases);
  CHECK(a.lease_ms == 3'000);
  CHECK(c.in(member_state::expiring) == "0,1");
  CHECK(c.rounds.leases_sent(21 * ms).what == kind::none);
  CHECK(c.rounds.lease_set(1, {}, true, 25 * ms).what == kind::none);  // member 0 not answered yet
  require_finish(c.rounds.lease_set(0, {}, true, 30 * ms), {}, 1);
}

TEST_CASE("composite: with a lease and no wait, members are taken for the lease itself and not set again") {
  composite c(composite_quorum::majority, 3, 0, 5'000);
  require_try(c.rounds.start(0), 0, 0, 5'000);
  require_try(c.rounds.member_answered(0, {}, true, 1 * ms), 1, 0, 5'000);
  require_try(c.rounds.member_answered(1, {}, true, 2 * ms), 2, 0, 5'000);
  const round_action a = c.rounds.member_answered(2, {}, true, 3 * ms);
  require_finish(a, {}, 5'000 - 3 - (50 + 2));  // lease - elapsed - drift (1% + 2 ms)
}

TEST_CASE("composite: answers the driver did not ask for change nothing") {
  composite c(composite_quorum::all, 2, 0, 0);
  require_try(c.rounds.start(0), 0, 0, 0);
  CHECK(c.rounds.member_answered(1, {}, true, 0).what == kind::none);  // not being tried
  CHECK(c.rounds.member_answered(7, {}, true, 0).what == kind::none);  // no such member
  CHECK(c.rounds.lease_set(0, {}, true, 0).what == kind::none);
  CHECK(c.rounds.released(0, 0).what == kind::none);
  CHECK(c.rounds.releases_sent(0).what == kind::none);
  CHECK(c.rounds.leases_sent(0).what == kind::none);
  CHECK(c.rounds.member(1) == member_state::untried);
  require_try(c.rounds.member_answered(0, {}, true, 0), 1, 0, 0);
  require_finish(c.rounds.member_answered(1, {}, true, 0), {}, 1);
  CHECK(c.rounds.cancel().what == kind::none);  // finished: nothing to cancel
  CHECK(c.rounds.pause_over(0).what == kind::none);
}

TEST_CASE("composite: an empty composite reports invalid_config at once") {
  composite c(composite_quorum::majority, 0, 1'000, 0);
  require_finish(c.rounds.start(0), errc::invalid_config, 0);
}

TEST_CASE("composite: a multi lock member that refuses ends the round: what it took is given back, the rest untried") {
  composite c(composite_quorum::all, 3, 0, 0);
  require_try(c.rounds.start(0), 0, 0, 0);
  require_try(c.rounds.member_answered(0, {}, true, 1 * ms), 1, 0, 0);
  REQUIRE(c.rounds.member_answered(1, {}, false, 2 * ms).what == kind::release);
  CHECK(c.in(member_state::releasing) == "0");  // not the busy one, and member 2 never tried
  CHECK(c.rounds.member(1) == member_state::untried);
  CHECK(c.rounds.member(2) == member_state::untried);
  require_finish(c.releases_answered(3), {}, 0);  // no wait: no retry, and busy is no error
}

TEST_CASE("composite: a multi lock retries after a refusal, with a pause inside the wait, until its deadline") {
  composite c(composite_quorum::all, 2, 300, 0);
  require_try(c.rounds.start(0), 0, 300, 0);
  require_try(c.rounds.member_answered(0, {}, true, 20 * ms), 1, 280, 0);
  REQUIRE(c.rounds.member_answered(1, {}, false, 100 * ms).what == kind::release);
  round_action a = c.releases_answered(110);
  REQUIRE(a.what == kind::pause);
  CHECK(a.wait_ms >= 0);
  CHECK(a.wait_ms <= 50);
  // The next round starts from the first member, with what is left of the same deadline.
  require_try(c.rounds.pause_over(150 * ms), 0, 150, 0);
  CHECK(c.rounds.rounds() == 2);
  CHECK(c.rounds.deadline_ns() == 300 * ms);
  require_try(c.rounds.member_answered(0, {}, true, 160 * ms), 1, 140, 0);
  // Close to the deadline: the pause is cut to the time left.
  REQUIRE(c.rounds.member_answered(1, {}, false, 290 * ms).what == kind::release);
  a = c.releases_answered(295);
  REQUIRE(a.what == kind::pause);
  CHECK(a.wait_ms <= 5);
  require_try(c.rounds.pause_over(297 * ms), 0, 3, 0);
  // Refused at the deadline: given back, and the try ends not acquired, without an error.
  require_try(c.rounds.member_answered(0, {}, true, 298 * ms), 1, 2, 0);
  REQUIRE(c.rounds.member_answered(1, {}, false, 300 * ms).what == kind::release);
  require_finish(c.releases_answered(301), {}, 0);
}

TEST_CASE("composite: the deadline is checked after each member: one granted past it is given back") {
  composite c(composite_quorum::all, 2, 100, 0);
  require_try(c.rounds.start(0), 0, 100, 0);
  require_try(c.rounds.member_answered(0, {}, true, 40 * ms), 1, 60, 0);
  // Granted, but the answer came when the wait was over: the caller is told "not acquired".
  REQUIRE(c.rounds.member_answered(1, {}, true, 100 * ms).what == kind::release);
  CHECK(c.in(member_state::releasing) == "0,1");
  require_finish(c.releases_answered(101), {}, 0);
}

TEST_CASE("composite: a multi lock member that fails ends the round with its error; time left is used") {
  composite c(composite_quorum::all, 2, 1'000, 0);
  require_try(c.rounds.start(0), 0, 1'000, 0);
  require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 990, 0);
  REQUIRE(c.rounds.member_answered(1, refused, false, 20 * ms).what == kind::release);
  CHECK(c.in(member_state::releasing) == "0");  // the failed member gave back what it could itself
  REQUIRE(c.releases_answered(30).what == kind::pause);  // a transient error: tried again
  require_try(c.rounds.pause_over(40 * ms), 0, 960, 0);
  require_finish(c.rounds.member_answered(0, refused, false, 1'000 * ms), refused, 0);  // nothing held, no time
}

TEST_CASE("composite: an error no retry can cure ends a tryLock and a lock() at once") {
  SUBCASE("tryLock with time left") {
    composite c(composite_quorum::all, 2, 1'000, 0);
    require_try(c.rounds.start(0), 0, 1'000, 0);
    require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 990, 0);
    REQUIRE(c.rounds.member_answered(1, errc::wrong_type, false, 20 * ms).what == kind::release);
    require_finish(c.releases_answered(30), errc::wrong_type, 0);
  }
  SUBCASE("lock()") {
    composite c(composite_quorum::majority, 3, 0, 0, true);
    require_try(c.rounds.start(0), 0, 1'500, 0);  // lock(): 3 x 1500 ms, a third each
    require_try(c.rounds.member_answered(0, errc::permission_denied, false, 10 * ms), 1, 1'500, 0);
    // No quorum, nothing held: lock() ends with the error no retry can cure.
    require_finish(c.rounds.member_answered(1, {}, false, 20 * ms), errc::permission_denied, 0);
  }
}

TEST_CASE("composite: a red lock with a minority down acquires and reports lease - elapsed - drift") {
  composite c(composite_quorum::majority, 5, 0, 10'000);
  CHECK(c.rounds.needed() == 3);
  require_try(c.rounds.start(0), 0, 0, 10'000);
  require_try(c.rounds.member_answered(0, {}, true, 5 * ms), 1, 0, 10'000);
  require_try(c.rounds.member_answered(1, refused, false, 10 * ms), 2, 0, 10'000);
  require_try(c.rounds.member_answered(2, {}, true, 15 * ms), 3, 0, 10'000);
  require_try(c.rounds.member_answered(3, unknown, false, 320 * ms), 4, 0, 10'000);
  require_finish(c.rounds.member_answered(4, {}, true, 330 * ms), {}, 10'000 - 330 - (100 + 2));
  CHECK(c.in(member_state::held) == "0,2,4");
  CHECK(c.in(member_state::failed) == "1,3");  // left to their clients; unlock covers them
}

TEST_CASE("composite: a red lock stops trying once a quorum is certain (Redisson's shortcut)") {
  composite c(composite_quorum::majority, 5, 0, 0);
  require_try(c.rounds.start(0), 0, 0, 0);
  require_try(c.rounds.member_answered(0, {}, true, 1 * ms), 1, 0, 0);
  require_try(c.rounds.member_answered(1, {}, true, 2 * ms), 2, 0, 0);
  require_try(c.rounds.member_answered(2, {}, true, 3 * ms), 3, 0, 0);
  const round_action a = c.rounds.member_answered(3, {}, false, 4 * ms);
  require_finish(a, {}, 30'000 - 4 - (300 + 2));  // the watchdogs' lease
  CHECK(c.rounds.member(4) == member_state::untried);
}

TEST_CASE("composite: a red lock without a majority gives back its minority; quorum_not_reached after errors") {
  SUBCASE("three of five down") {
    composite c(composite_quorum::majority, 5, 0, 10'000);
    require_try(c.rounds.start(0), 0, 0, 10'000);
    require_try(c.rounds.member_answered(0, refused, false, 1 * ms), 1, 0, 10'000);
    require_try(c.rounds.member_answered(1, {}, true, 2 * ms), 2, 0, 10'000);
    require_try(c.rounds.member_answered(2, refused, false, 3 * ms), 3, 0, 10'000);
    REQUIRE(c.rounds.member_answered(3, {}, true, 4 * ms).what == kind::try_member);
    REQUIRE(c.rounds.member_answered(4, refused, false, 5 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "1,3");
    require_finish(c.releases_answered(6), errc::quorum_not_reached, 0);
  }
  SUBCASE("only busy: no error") {
    composite c(composite_quorum::majority, 3, 0, 0);
    require_try(c.rounds.start(0), 0, 0, 0);
    require_try(c.rounds.member_answered(0, {}, false, 1 * ms), 1, 0, 0);
    require_finish(c.rounds.member_answered(1, {}, false, 2 * ms), {}, 0);  // nothing held: no release
  }
}

TEST_CASE("composite: each red lock member waits max(wait / n, 1 ms), never more than the time left") {
  composite c(composite_quorum::majority, 3, 900, 0);
  require_try(c.rounds.start(0), 0, 300, 0);
  require_try(c.rounds.member_answered(0, {}, false, 300 * ms), 1, 300, 0);
  require_try(c.rounds.member_answered(1, {}, true, 750 * ms), 2, 150, 0);
  composite tiny(composite_quorum::majority, 5, 2, 0);
  require_try(tiny.rounds.start(0), 0, 1, 0);
}

TEST_CASE("composite: a member's acquire answered unknown is left to its client; a lease answered unknown is given back") {
  SUBCASE("multi lock: the unknown member is not sent an unlock (a hold the owner had before would go)") {
    composite c(composite_quorum::all, 2, 0, 0);
    require_try(c.rounds.start(0), 0, 0, 0);
    require_try(c.rounds.member_answered(0, {}, true, 1 * ms), 1, 0, 0);
    REQUIRE(c.rounds.member_answered(1, unknown, false, 600 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "0");
    require_finish(c.releases_answered(601), unknown, 0);
  }
  SUBCASE("multi lock: a member whose lease change is unknown may still be ours: released with the rest") {
    composite c(composite_quorum::all, 2, 500, 3'000);
    require_try(c.rounds.start(0), 0, 500, 1'000);
    require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 490, 1'000);
    REQUIRE(c.rounds.member_answered(1, {}, true, 20 * ms).what == kind::set_leases);
    CHECK(c.rounds.leases_sent(20 * ms).what == kind::none);
    CHECK(c.rounds.lease_set(0, {}, true, 25 * ms).what == kind::none);
    REQUIRE(c.rounds.lease_set(1, unknown, false, 330 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "0,1");
    REQUIRE(c.releases_answered(340).what == kind::pause);  // time left: another round
    require_try(c.rounds.pause_over(350 * ms), 0, 150, 1'000);
    require_finish(c.rounds.member_answered(0, {}, false, 500 * ms), {}, 0);  // the last round's outcome
  }
  SUBCASE("red lock: a lease found gone no longer counts; with the majority left it still holds") {
    composite c(composite_quorum::majority, 3, 300, 5'000);
    require_try(c.rounds.start(0), 0, 100, 600);
    require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 100, 600);
    require_try(c.rounds.member_answered(1, {}, true, 20 * ms), 2, 100, 600);
    REQUIRE(c.rounds.member_answered(2, {}, true, 30 * ms).what == kind::set_leases);
    CHECK(c.rounds.lease_set(0, {}, false, 35 * ms).what == kind::none);  // gone meanwhile
    CHECK(c.rounds.lease_set(1, {}, true, 36 * ms).what == kind::none);
    CHECK(c.rounds.leases_sent(36 * ms).what == kind::none);
    require_finish(c.rounds.lease_set(2, {}, true, 40 * ms), {}, 5'000 - 40 - (50 + 2));
    CHECK(c.rounds.member(0) == member_state::lapsed);
  }
  SUBCASE("red lock: two leases lost out of three: lease_lost counts as an error") {
    composite c(composite_quorum::majority, 3, 300, 5'000);
    c.rounds.start(0);
    c.rounds.member_answered(0, {}, true, 10 * ms);
    c.rounds.member_answered(1, {}, true, 20 * ms);
    REQUIRE(c.rounds.member_answered(2, {}, true, 30 * ms).what == kind::set_leases);
    c.rounds.leases_sent(30 * ms);
    c.rounds.lease_set(0, {}, false, 35 * ms);
    c.rounds.lease_set(1, unknown, false, 36 * ms);
    REQUIRE(c.rounds.lease_set(2, {}, true, 37 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "0,1,2");
    require_finish(c.releases_answered(300), errc::quorum_not_reached, 0);
  }
}

TEST_CASE("composite: a red lock round too slow for its lease gives everything back") {
  SUBCASE("no wait: not acquired, no error") {
    composite c(composite_quorum::majority, 3, 0, 1'000);
    require_try(c.rounds.start(0), 0, 0, 1'000);
    require_try(c.rounds.member_answered(0, {}, true, 400 * ms), 1, 0, 1'000);
    require_try(c.rounds.member_answered(1, refused, false, 700 * ms), 2, 0, 1'000);
    // 1000 - 990 - 12 = -2: no validity left.
    REQUIRE(c.rounds.member_answered(2, {}, true, 990 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "0,2");
    require_finish(c.releases_answered(995), {}, 0);
  }
  SUBCASE("one millisecond of validity is enough") {
    composite c(composite_quorum::majority, 1, 0, 1'000);
    require_try(c.rounds.start(0), 0, 0, 1'000);
    require_finish(c.rounds.member_answered(0, {}, true, 987 * ms), {}, 1);
  }
  SUBCASE("the watchdogs' lease: the shortest among the members held") {
    composite c(composite_quorum::majority, 3, 0, 0);
    c.members[0].watchdog_lease_ms = 300;
    c.members[1].watchdog_lease_ms = 20'000;
    c.members[2].watchdog_lease_ms = 25'000;
    require_try(c.rounds.start(0), 0, 0, 0);
    require_try(c.rounds.member_answered(0, {}, false, 1 * ms), 1, 0, 0);  // the short one is busy
    require_try(c.rounds.member_answered(1, {}, true, 2 * ms), 2, 0, 0);
    require_finish(c.rounds.member_answered(2, {}, true, 10 * ms), {}, 20'000 - 10 - (200 + 2));
  }
}

TEST_CASE("composite: cancelled while a member attempt is in flight: its answer is awaited, what was taken given back") {
  composite c(composite_quorum::all, 3, 5'000, 0);
  require_try(c.rounds.start(0), 0, 5'000, 0);
  require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 4'990, 0);
  CHECK(c.rounds.cancel().what == kind::cancel_members);
  CHECK(c.rounds.cancelled());
  CHECK_FALSE(c.rounds.finished());  // member 1's attempt is still out
  REQUIRE(c.rounds.member_answered(1, make_error_code(std::errc::operation_canceled), false, 12 * ms).what ==
          kind::release);
  CHECK(c.in(member_state::releasing) == "0");
  CHECK(c.rounds.member(2) == member_state::untried);  // not tried after the cancel
  require_aborted(c.releases_answered(13));
}

TEST_CASE("composite: a member granted after the caller cancelled is given back with the rest") {
  composite c(composite_quorum::majority, 3, 5'000, 0);
  require_try(c.rounds.start(0), 0, 1'666, 0);
  require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 1'666, 0);
  CHECK(c.rounds.cancel().what == kind::cancel_members);
  // The cancel came too late for member 1: it took the lock. A majority is held, yet the caller
  // gave up: both go back, and the caller hears operation_aborted.
  REQUIRE(c.rounds.member_answered(1, {}, true, 12 * ms).what == kind::release);
  CHECK(c.in(member_state::releasing) == "0,1");
  CHECK(c.rounds.released(1, 13 * ms).what == kind::none);
  CHECK(c.rounds.releases_sent(13 * ms).what == kind::none);
  require_aborted(c.rounds.released(0, 14 * ms));
}

TEST_CASE("composite: cancelled during the pause or the releases ends aborted, nothing more tried") {
  SUBCASE("pause") {
    composite c(composite_quorum::all, 1, 5'000, 0);
    require_try(c.rounds.start(0), 0, 5'000, 0);
    REQUIRE(c.rounds.member_answered(0, {}, false, 10 * ms).what == kind::pause);
    CHECK(c.rounds.cancel().what == kind::cancel_members);  // the driver stops the timer: it fires at once
    require_aborted(c.rounds.pause_over(11 * ms));
    CHECK(c.in(member_state::untried) == "0");
  }
  SUBCASE("releases") {
    composite c(composite_quorum::all, 2, 5'000, 0);
    require_try(c.rounds.start(0), 0, 5'000, 0);
    require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 4'990, 0);
    REQUIRE(c.rounds.member_answered(1, {}, false, 20 * ms).what == kind::release);
    CHECK(c.rounds.releases_sent(20 * ms).what == kind::none);
    CHECK(c.rounds.cancel().what == kind::cancel_members);
    require_aborted(c.rounds.released(0, 21 * ms));
  }
}

TEST_CASE("composite: cancelled while the leases are set: a round that holds reports it, one that lost them aborts") {
  SUBCASE("held") {
    composite c(composite_quorum::all, 2, 500, 3'000);
    c.rounds.start(0);
    c.rounds.member_answered(0, {}, true, 10 * ms);
    REQUIRE(c.rounds.member_answered(1, {}, true, 20 * ms).what == kind::set_leases);
    CHECK(c.rounds.leases_sent(20 * ms).what == kind::none);
    CHECK(c.rounds.cancel().what == kind::cancel_members);
    CHECK(c.rounds.lease_set(0, {}, true, 25 * ms).what == kind::none);
    require_finish(c.rounds.lease_set(1, {}, true, 26 * ms), {}, 1);  // the caller holds the lock: it is told so
  }
  SUBCASE("a lease lost") {
    composite c(composite_quorum::all, 2, 500, 3'000);
    c.rounds.start(0);
    c.rounds.member_answered(0, {}, true, 10 * ms);
    REQUIRE(c.rounds.member_answered(1, {}, true, 20 * ms).what == kind::set_leases);
    CHECK(c.rounds.leases_sent(20 * ms).what == kind::none);
    CHECK(c.rounds.cancel().what == kind::cancel_members);
    CHECK(c.rounds.lease_set(0, {}, false, 25 * ms).what == kind::none);
    REQUIRE(c.rounds.lease_set(1, {}, true, 26 * ms).what == kind::release);
    CHECK(c.in(member_state::releasing) == "0,1");
    require_aborted(c.releases_answered(27));
  }
}

TEST_CASE("composite: lock() takes Redisson's waitTime, and tries again after transient errors with a fresh deadline") {
  SUBCASE("no lease: n x 1500 ms") {
    composite c(composite_quorum::all, 3, 0, 0, true);
    require_try(c.rounds.start(0), 0, 4'500, 0);
  }
  for (std::uint64_t seed = 1; seed <= 50; ++seed) {
    composite shorter(composite_quorum::all, 3, 0, 3'000, true, seed);  // lease <= 4500: [lease/2, lease)
    shorter.rounds.start(0);
    CHECK(shorter.rounds.try_wait_ms() >= 1'500);
    CHECK(shorter.rounds.try_wait_ms() < 3'000);
    composite raised(composite_quorum::all, 3, 0, 500, true, seed);  // raised to 2000 first
    raised.rounds.start(0);
    CHECK(raised.rounds.try_wait_ms() >= 1'000);
    CHECK(raised.rounds.try_wait_ms() < 2'000);
    composite longer(composite_quorum::all, 2, 0, 10'000, true, seed);  // lease > 3000: [3000, lease)
    longer.rounds.start(0);
    CHECK(longer.rounds.try_wait_ms() >= 3'000);
    CHECK(longer.rounds.try_wait_ms() < 10'000);
    CHECK(longer.rounds.member_lease_ms() == 2 * longer.rounds.try_wait_ms());
  }
  SUBCASE("transient errors, past the try's deadline: a new try") {
    composite c(composite_quorum::all, 2, 0, 0, true);
    require_try(c.rounds.start(0), 0, 3'000, 0);
    require_try(c.rounds.member_answered(0, {}, true, 10 * ms), 1, 2'990, 0);
    REQUIRE(c.rounds.member_answered(1, refused, false, 3'000 * ms).what == kind::release);
    const round_action pause = c.releases_answered(3'010);
    REQUIRE(pause.what == kind::pause);
    CHECK(pause.wait_ms <= 50);
    require_try(c.rounds.pause_over(3'050 * ms), 0, 3'000, 0);  // the whole wait again
    CHECK(c.rounds.deadline_ns() == 6'050 * ms);
    require_try(c.rounds.member_answered(0, {}, true, 3'060 * ms), 1, 2'990, 0);
    require_finish(c.rounds.member_answered(1, {}, true, 3'070 * ms), {}, 1);
  }
}

TEST_CASE("composite: a wait too long for the clock has no deadline, and every member gets its share") {
  const std::int64_t forever = std::numeric_limits<std::int64_t>::max() / 1'000'000;
  composite c(composite_quorum::all, 2, forever, 0);
  require_try(c.rounds.start(1'000 * ms), 0, forever, 0);
  CHECK(c.rounds.deadline_ns() == -1);
  require_try(c.rounds.member_answered(0, {}, true, 5'000 * ms), 1, forever, 0);
  REQUIRE(c.rounds.member_answered(1, {}, false, 9'000 * ms).what == kind::release);
  REQUIRE(c.releases_answered(9'001).what == kind::pause);  // never out of time
}

TEST_CASE("composite: the pause never reaches past the deadline, whatever the draw") {
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    composite c(composite_quorum::all, 1, 100, 0, false, seed);
    c.rounds.start(0);
    round_action a = c.rounds.member_answered(0, {}, false, 80 * ms);
    REQUIRE(a.what == kind::pause);
    CHECK(a.wait_ms >= 0);
    CHECK(a.wait_ms <= 20);
    require_try(c.rounds.pause_over((80 + a.wait_ms) * ms), 0, 20 - a.wait_ms, 0);
    const std::int64_t t = std::max<std::int64_t>(93, 80 + a.wait_ms);
    a = c.rounds.member_answered(0, {}, false, t * ms);
    if (t == 100) {
      require_finish(a, {}, 0);  // refused at the deadline
    } else {
      REQUIRE(a.what == kind::pause);
      CHECK(a.wait_ms <= 100 - t);
    }
  }
}

TEST_CASE("composite unlock: what the caller hears when some members fail") {
  using errors = std::vector<std::error_code>;
  const std::error_code timed_out = make_error_code(errc::timed_out);
  auto verdict = [](composite_quorum q, const errors& each) {
    return detail::unlock_verdict(q, each.data(), each.size());
  };
  SUBCASE("multi lock: the first failure in member order") {
    CHECK_FALSE(verdict(composite_quorum::all, errors(3)));
    CHECK(verdict(composite_quorum::all, {{}, not_owner, {}}) == errc::not_owner);
    CHECK(verdict(composite_quorum::all, {{}, timed_out, refused}) == timed_out);
    CHECK(verdict(composite_quorum::all, {refused, timed_out, {}}) == refused);
  }
  SUBCASE("red lock: not_owner is expected of members it did not take, unless none was released") {
    CHECK_FALSE(verdict(composite_quorum::majority, {not_owner, {}, not_owner}));
    CHECK(verdict(composite_quorum::majority, {not_owner, not_owner, not_owner}) == errc::not_owner);
    CHECK(verdict(composite_quorum::majority, {not_owner, refused, {}}) == refused);
    CHECK(verdict(composite_quorum::majority, {refused, not_owner, not_owner}) == refused);
    CHECK(verdict(composite_quorum::majority, {{}, timed_out, refused, {}, {}}) == timed_out);
  }
  SUBCASE("no members") {
    CHECK(detail::unlock_verdict(composite_quorum::all, nullptr, 0) == errc::invalid_config);
  }
}

TEST_CASE("composite valid_for: the least of all (multi lock), the majority's (red lock)") {
  using values = std::vector<std::int64_t>;
  auto verdict = [](composite_quorum q, values each, std::error_code first = {}) {
    return detail::valid_for_verdict(q, each.data(), each.size(), first);
  };
  CHECK(verdict(composite_quorum::all, {3'000, 2'000, 2'500}).ms == 2'000);
  const auto lost = verdict(composite_quorum::all, {3'000, 0, 2'500}, refused);
  CHECK(lost.ms == 0);
  CHECK(lost.ec == refused);
  CHECK(verdict(composite_quorum::majority, {0, 2'000, 2'500}).ms == 2'000);
  CHECK(verdict(composite_quorum::majority, {900, 0, 4'000, 100, 2'000}).ms == 900);
  const auto minority = verdict(composite_quorum::majority, {0, 0, 2'500}, not_owner);
  CHECK(minority.ms == 0);
  CHECK(minority.ec == not_owner);
  CHECK_FALSE(verdict(composite_quorum::majority, {0, 5, 2'500}, refused).ec);  // valid: the error is not news
  CHECK(detail::valid_for_verdict(composite_quorum::majority, nullptr, 0, {}).ec == errc::invalid_config);
}

}  // namespace composite_rounds_test
