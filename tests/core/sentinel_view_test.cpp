// What a client behind Sentinel knows of its master, and when an acquire must wait for the sentinels
// to be asked again (src/sentinel/sentinel_view.hpp), without sockets or clocks: a live watch keeps
// the view fresh, a silent one lets it age, a watch subscribed again after a gap covers nothing
// before it (the sentinels are asked), and a confirmation joins what the watch heard.
#include <doctest/doctest.h>

#include <cstdint>

#include "sentinel/sentinel_view.hpp"

namespace detail = deadbolt::detail;

namespace {
constexpr std::int64_t view_ms = 1'000'000;
constexpr std::int64_t stale_after = 3'000 * view_ms;  // ping_interval 1 s + ping_timeout 2 s
}  // namespace

TEST_CASE("sentinel view: nothing known at first; a confirmation is fresh for the bound") {
  detail::sentinel_view v(stale_after);
  CHECK_FALSE(v.fresh(0));
  CHECK_FALSE(v.fresh(10 * view_ms));
  v.confirmed(100 * view_ms);
  CHECK(v.known_until() == 100 * view_ms);
  CHECK(v.fresh(3'100 * view_ms));
  CHECK_FALSE(v.fresh(3'101 * view_ms));
  v.confirmed(50 * view_ms);  // an older answer changes nothing
  CHECK(v.known_until() == 100 * view_ms);
}

TEST_CASE("sentinel view: a watch subscribed after the confirmation must be backed by asking once") {
  detail::sentinel_view v(stale_after);
  v.confirmed(100 * view_ms);
  v.watch_subscribed(200 * view_ms);  // a switch between 100 and 200 would not have been heard
  CHECK(v.ask_due());
  CHECK(v.known_until() == 100 * view_ms);
  v.watch_heard(5'000 * view_ms);
  CHECK_FALSE(v.fresh(5'000 * view_ms));  // what it heard does not reach back before its subscription
  v.confirmed(5'000 * view_ms);           // asked after the subscription: joined
  CHECK_FALSE(v.ask_due());
  v.watch_heard(9'000 * view_ms);
  CHECK(v.known_until() == 9'000 * view_ms);
  CHECK(v.fresh(12'000 * view_ms));
}

TEST_CASE("sentinel view: a live watch keeps it fresh; a silent one lets it age past the bound") {
  detail::sentinel_view v(stale_after);
  v.watch_subscribed(0);
  v.confirmed(10 * view_ms);
  for (std::int64_t t = 1'000; t <= 20'000; t += 1'000) {
    v.watch_heard(t * view_ms);  // the PING's answer every interval
    CHECK(v.fresh(t * view_ms + 999 * view_ms));
  }
  // The sentinel goes silent after 20 s: the view is fresh for the bound, then an acquire waits.
  CHECK(v.fresh(23'000 * view_ms));
  CHECK_FALSE(v.fresh(23'001 * view_ms));
  // The watch is dropped (no answer to its PING) and what it heard up to 20 s still counts.
  v.watch_lost();
  CHECK(v.known_until() == 20'000 * view_ms);
  CHECK_FALSE(v.ask_due());
  // Subscribed again on another sentinel: a switch during the gap may have been missed.
  v.watch_subscribed(23'500 * view_ms);
  CHECK(v.ask_due());
  CHECK(v.known_until() == 20'000 * view_ms);
  v.confirmed(23'600 * view_ms);
  CHECK_FALSE(v.ask_due());
  v.watch_heard(24'000 * view_ms);
  CHECK(v.known_until() == 24'000 * view_ms);
}

TEST_CASE("sentinel view: without PINGs (stale_after 0) the watch is trusted as before") {
  detail::sentinel_view v(0);
  CHECK_FALSE(v.enabled());
  CHECK(v.fresh(0));
  CHECK(v.fresh(1'000'000 * view_ms));
  v.watch_subscribed(10 * view_ms);
  CHECK_FALSE(v.ask_due());
}
