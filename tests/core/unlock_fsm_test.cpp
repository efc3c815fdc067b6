// The unlock's decisions, driven without sockets (src/lock/unlock_fsm.hpp): lost replies retried with
// the same latch, a client closing, replica-sync resends, reentrant and read holds, holds the caller
// never had released as surplus (bounded), and what the caller hears in each case.
#include <doctest/doctest.h>

#include <ostream>
#include <system_error>

#include "deadbolt/error.hpp"
#include "lock/unlock_fsm.hpp"

// A namespace of its own: the socket-free suites share one unity translation unit.
namespace unlock_fsm_test {

namespace detail = deadbolt::detail;
using deadbolt::errc;
using detail::unlock_action;
using detail::unlock_hold;
using detail::unlock_reply;
using kind = unlock_action::kind;
using change = unlock_action::hold_change;

const std::error_code lost_reply = make_error_code(errc::outcome_unknown);
const std::error_code refused = make_error_code(errc::not_connected);

unlock_hold held(int count, bool lost = false, bool read = false) {
  unlock_hold h;
  h.known = true;
  h.count = count;
  h.lost = lost;
  h.read = read;
  return h;
}

detail::unlock_fsm started(int sync_retries = 0, int max_surplus = 64) {
  detail::unlock_fsm fsm;
  detail::unlock_limits limits;
  limits.attempts = 3;
  limits.max_surplus = max_surplus;
  limits.sync_retries = sync_retries;
  fsm.start(limits);
  return fsm;
}

unlock_action reply(detail::unlock_fsm& fsm, unlock_reply r, const unlock_hold& h, bool unsynced = false) {
  return fsm.on_reply(r, {}, unsynced, h, false);
}

TEST_CASE("unlock: the caller's only hold released: the hold is dropped, the latch deleted, success") {
  auto fsm = started();
  const auto a = reply(fsm, unlock_reply::released, held(1));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::released);
  CHECK(a.delete_latch);
  CHECK_FALSE(a.ec);
  CHECK(a.value == 1);
  CHECK_FALSE(fsm.final_error(a.ec));
}

TEST_CASE("unlock: a reentrant hold counts one less and stays held; nothing is sent again") {
  auto fsm = started();
  const auto a = reply(fsm, unlock_reply::still_held, held(3));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::one_less);
  CHECK_FALSE(a.delete_latch);
  CHECK_FALSE(a.ec);
  CHECK(a.value == 0);
}

TEST_CASE("unlock: lost replies are sent again with the same latch, three sends in all, then unknown") {
  auto fsm = started();
  CHECK(fsm.sends() == 1);
  CHECK(fsm.on_failure(lost_reply, false).what == kind::send_again);
  CHECK(fsm.on_failure(lost_reply, false).what == kind::send_again);
  CHECK(fsm.sends() == 3);
  const auto a = fsm.on_failure(lost_reply, false);
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::stop_renewing);  // it ends with its lease
  CHECK(a.ec == errc::outcome_unknown);
  CHECK(a.value == 0);
}

TEST_CASE("unlock: a retry whose first send had run is answered by the latch as released") {
  auto fsm = started();
  REQUIRE(fsm.on_failure(lost_reply, false).what == kind::send_again);
  const auto a = reply(fsm, unlock_reply::released, held(1));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::released);
  CHECK_FALSE(a.ec);
}

TEST_CASE("unlock: a client shutting down or a plain failure is not retried") {
  auto closing = started();
  const auto a = closing.on_failure(lost_reply, true);
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::stop_renewing);
  CHECK(a.ec == errc::outcome_unknown);
  auto failed = started();
  const auto b = failed.on_failure(make_error_code(errc::protocol_error), false);
  CHECK(b.what == kind::finish);
  CHECK(b.ec == errc::protocol_error);
}

TEST_CASE("unlock: nothing held on the server: not_owner, or lease_lost for a hold the caller was told it lost") {
  auto fsm = started();
  auto a = reply(fsm, unlock_reply::gone, held(1));
  CHECK(a.change == change::forget);
  CHECK(a.ec == errc::not_owner);
  CHECK_FALSE(a.delete_latch);
  fsm = started();
  a = reply(fsm, unlock_reply::gone, held(1, true));
  CHECK(a.ec == errc::lease_lost);
  fsm = started();
  a = reply(fsm, unlock_reply::gone, unlock_hold{});
  CHECK(a.change == change::none);  // no record to drop
  CHECK(a.ec == errc::not_owner);
}

TEST_CASE("unlock: a released hold the caller was told it lost is reported lost") {
  auto fsm = started();
  const auto a = reply(fsm, unlock_reply::released, held(1, true));
  CHECK(a.change == change::released);
  CHECK(a.ec == errc::lease_lost);
  CHECK(a.value == 1);
}

TEST_CASE("unlock: the last read hold leaves the lock to the other readers") {
  auto fsm = started();
  auto a = reply(fsm, unlock_reply::still_held, held(1, false, true));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::released);
  CHECK_FALSE(a.ec);
  fsm = started();
  a = reply(fsm, unlock_reply::still_held, held(1, true, true));
  CHECK(a.ec == errc::lease_lost);
}

TEST_CASE("unlock: a hold of nobody the client knows, still held: not this unlock's to judge") {
  auto fsm = started();
  const auto a = reply(fsm, unlock_reply::still_held, unlock_hold{});
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::none);
  CHECK_FALSE(a.ec);
}

TEST_CASE("unlock: holds the caller never had are released too, each with a new latch, then success") {
  auto fsm = started();
  // The caller's last hold, yet the server still counts two more (an acquire whose outcome was unknown).
  auto a = reply(fsm, unlock_reply::still_held, held(1));
  CHECK(a.what == kind::release_surplus);
  CHECK(fsm.sends() == 1);  // a new release: its own send count
  a = reply(fsm, unlock_reply::still_held, held(1));
  CHECK(a.what == kind::release_surplus);
  CHECK(fsm.surplus_releases() == 2);
  a = reply(fsm, unlock_reply::released, held(1));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::released);
  CHECK(a.delete_latch);
  CHECK_FALSE(a.ec);
  CHECK(a.value == 1);
}

TEST_CASE("unlock: a surplus release of a lost hold reports lease_lost, whatever the later replies") {
  auto fsm = started();
  REQUIRE(reply(fsm, unlock_reply::still_held, held(1, true)).what == kind::release_surplus);
  auto a = reply(fsm, unlock_reply::gone, held(1, true));  // gone meanwhile (its lease ran out)
  CHECK(a.what == kind::finish);
  CHECK(a.ec == errc::lease_lost);
  CHECK(a.value == 1);
}

TEST_CASE("unlock: surplus releases are bounded; the rest leaves the watchdog and ends with its lease") {
  auto fsm = started(0, 4);
  for (int i = 0; i < 4; ++i) REQUIRE(reply(fsm, unlock_reply::still_held, held(1)).what == kind::release_surplus);
  const auto a = reply(fsm, unlock_reply::still_held, held(1));
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::stop_renewing);
  CHECK_FALSE(a.ec);
  CHECK(a.value == 1);
}

TEST_CASE("unlock: a lost reply during surplus releases reports what the caller's own release was") {
  auto fsm = started();
  REQUIRE(reply(fsm, unlock_reply::still_held, held(1)).what == kind::release_surplus);
  REQUIRE(fsm.on_failure(lost_reply, false).what == kind::send_again);
  REQUIRE(fsm.on_failure(lost_reply, false).what == kind::send_again);
  const auto a = fsm.on_failure(refused, false);
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::stop_renewing);
  CHECK_FALSE(a.ec);  // the caller's hold was released; the surplus ends with its lease
  CHECK(a.value == 1);
}

TEST_CASE("unlock: a release no replica acknowledged is sent again with the same latch, then replicas_not_synced") {
  auto fsm = started(2);
  CHECK(reply(fsm, unlock_reply::released, held(1), true).what == kind::send_again);
  CHECK(reply(fsm, unlock_reply::released, held(1), true).what == kind::send_again);
  const auto a = reply(fsm, unlock_reply::released, held(1), true);
  CHECK(a.what == kind::finish);
  CHECK(a.change == change::released);  // the release stands on the master
  CHECK_FALSE(a.ec);
  CHECK(fsm.final_error(a.ec) == errc::replicas_not_synced);
}

TEST_CASE("unlock: acknowledged on a resend, the caller hears success; a closing client does not resend") {
  auto fsm = started(2);
  REQUIRE(reply(fsm, unlock_reply::released, held(1), true).what == kind::send_again);
  const auto a = reply(fsm, unlock_reply::released, held(1), false);
  CHECK_FALSE(fsm.final_error(a.ec));
  auto closing = started(2);
  const auto b = closing.on_reply(unlock_reply::released, {}, true, held(1), true);
  CHECK(b.what == kind::finish);
  CHECK(closing.final_error(b.ec) == errc::replicas_not_synced);
}

TEST_CASE("unlock: a failure outranks replicas_not_synced; an error reply is the server's word and never resent") {
  auto fsm = started(1);
  const auto a = fsm.on_reply(unlock_reply::server_error, make_error_code(errc::wrong_type), true, held(1), false);
  CHECK(a.what == kind::finish);
  CHECK(a.ec == errc::wrong_type);
  CHECK(a.change == change::none);
  CHECK(fsm.final_error(a.ec) == errc::wrong_type);
  auto odd = started();
  const auto b = reply(odd, unlock_reply::unexpected, held(1));
  CHECK(b.ec == errc::protocol_error);
  CHECK(b.change == change::none);
}

TEST_CASE("unlock: a new start forgets the last unlock's surplus and sync state") {
  auto fsm = started(1);
  REQUIRE(reply(fsm, unlock_reply::still_held, held(1)).what == kind::release_surplus);
  (void)reply(fsm, unlock_reply::released, held(1), true);
  (void)reply(fsm, unlock_reply::released, held(1), true);
  fsm.start(detail::unlock_limits{});
  CHECK(fsm.surplus_releases() == 0);
  CHECK(fsm.sends() == 1);
  const auto a = reply(fsm, unlock_reply::gone, held(1));
  CHECK(a.value == 0);
  CHECK(a.ec == errc::not_owner);
  CHECK(fsm.final_error({}) == std::error_code());
}

}  // namespace unlock_fsm_test
