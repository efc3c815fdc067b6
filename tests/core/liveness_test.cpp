// The subscriber connections' liveness rule (src/wire/liveness.hpp), driven without sockets or
// clocks: PING after the interval of silence, dead when nothing answers it within the timeout,
// anything heard counts, and off when the interval is 0.
#include <doctest/doctest.h>

#include <cstdint>

#include "wire/liveness.hpp"

namespace detail = deadbolt::detail;
using verdict = detail::liveness::verdict;

namespace {
constexpr std::int64_t live_ms = 1'000'000;
}  // namespace

TEST_CASE("liveness: a silent server is pinged after the interval and dead after the timeout") {
  detail::liveness l(1'000 * live_ms, 2'000 * live_ms);
  l.start(0);
  CHECK(l.next_check() == 1'000 * live_ms);
  CHECK(l.check(999 * live_ms) == verdict::wait);
  CHECK(l.check(1'000 * live_ms) == verdict::ping);
  CHECK(l.next_check() == 3'000 * live_ms);  // the PING's deadline
  CHECK(l.check(2'999 * live_ms) == verdict::wait);
  CHECK(l.check(3'000 * live_ms) == verdict::dead);
  CHECK_FALSE(l.running());  // nothing more until the next connection
  CHECK(l.check(9'000 * live_ms) == verdict::wait);
  CHECK(l.next_check() == 0);
}

TEST_CASE("liveness: an answer (or anything heard) after the PING keeps the connection, and the next PING waits a whole interval") {
  detail::liveness l(1'000 * live_ms, 2'000 * live_ms);
  l.start(0);
  REQUIRE(l.check(1'000 * live_ms) == verdict::ping);
  l.heard(1'001 * live_ms);  // the pong
  CHECK(l.check(1'500 * live_ms) == verdict::wait);
  CHECK(l.next_check() == 2'001 * live_ms);
  CHECK(l.check(2'001 * live_ms) == verdict::ping);
  l.heard(2'100 * live_ms);
  CHECK(l.check(3'100 * live_ms) == verdict::ping);
  CHECK(l.check(5'099 * live_ms) == verdict::wait);
  CHECK(l.check(5'100 * live_ms) == verdict::dead);
}

TEST_CASE("liveness: a busy connection is never pinged; what it heard before the PING does not answer it") {
  detail::liveness l(1'000 * live_ms, 2'000 * live_ms);
  l.start(0);
  for (std::int64_t t = 500; t < 10'000; t += 500) {
    l.heard(t * live_ms);
    CHECK(l.check(t * live_ms) == verdict::wait);
  }
  l.heard(10'000 * live_ms);
  CHECK(l.check(11'000 * live_ms) == verdict::ping);
  l.heard(10'500 * live_ms);  // older than the PING (a reading of the clock taken before it): no answer
  CHECK(l.check(13'000 * live_ms) == verdict::dead);
}

TEST_CASE("liveness: a new connection starts afresh; interval 0 turns the rule off") {
  detail::liveness l(1'000 * live_ms, 2'000 * live_ms);
  l.start(0);
  REQUIRE(l.check(1'000 * live_ms) == verdict::ping);
  l.stop();  // the connection dropped before the deadline
  CHECK(l.check(3'000 * live_ms) == verdict::wait);
  l.start(5'000 * live_ms);
  CHECK(l.check(5'999 * live_ms) == verdict::wait);
  CHECK(l.check(6'000 * live_ms) == verdict::ping);

  detail::liveness off(0, 2'000 * live_ms);
  CHECK_FALSE(off.enabled());
  off.start(0);
  CHECK_FALSE(off.running());
  CHECK(off.check(1'000'000 * live_ms) == verdict::wait);
  CHECK(off.next_check() == 0);
}
