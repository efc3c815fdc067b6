// The spin lock's backoff sequence (docs/protocol.md §5), a pure function.
#include <doctest/doctest.h>

#include <cstdint>

#include "lock/spin_backoff_sequence.hpp"

using namespace std::chrono_literals;
using deadbolt::spin_backoff;
using deadbolt::detail::backoff_state;
using deadbolt::detail::next_backoff_ms;

TEST_CASE("exponential backoff: starts at the initial delay, never decreases, reaches and keeps max") {
  for (std::uint64_t seed : {0ull, 1ull, 12345ull, ~0ull}) {
    backoff_state s;
    std::uint64_t r = seed;
    std::int64_t prev = 0;
    bool reached = false;
    for (int i = 0; i < 40; ++i) {
      r = r * 6364136223846793005ull + 1442695040888963407ull;
      const std::int64_t d = next_backoff_ms(spin_backoff{}, s, r);
      if (i == 0) CHECK(d == 1);
      CHECK(d <= 128);
      CHECK(d >= prev);
      if (reached) CHECK(d == 128);
      reached = reached || d == 128;
      prev = d;
    }
    CHECK(reached);
  }
}

TEST_CASE("exponential backoff without jitter doubles; jitter stays below the failure count") {
  backoff_state s;
  const std::int64_t expected[] = {1, 2, 4, 8, 16, 32, 64, 128, 128};
  for (std::int64_t e : expected) CHECK(next_backoff_ms(spin_backoff{}, s, 0) == e);

  // random % failures: the second pause is 1*2 + (r % 2), the third (that)*2 + (r % 3).
  backoff_state j;
  CHECK(next_backoff_ms(spin_backoff{}, j, 5) == 1);
  CHECK(next_backoff_ms(spin_backoff{}, j, 5) == 3);   // 1*2 + 5%2
  CHECK(next_backoff_ms(spin_backoff{}, j, 5) == 8);   // 3*2 + 5%3
  CHECK(next_backoff_ms(spin_backoff{}, j, 7) == 19);  // 8*2 + 7%4

  auto custom = spin_backoff::exponential(10ms, 100ms, 3);
  backoff_state c;
  CHECK(next_backoff_ms(custom, c, 0) == 10);
  CHECK(next_backoff_ms(custom, c, 0) == 30);
  CHECK(next_backoff_ms(custom, c, 0) == 90);
  CHECK(next_backoff_ms(custom, c, 0) == 100);
  CHECK(next_backoff_ms(custom, c, 0) == 100);
}

TEST_CASE("constant backoff is exact") {
  backoff_state s;
  for (std::uint64_t r : {0ull, 3ull, 99ull, ~0ull}) CHECK(next_backoff_ms(spin_backoff::constant(), s, r) == 64);
  backoff_state t;
  for (int i = 0; i < 5; ++i) CHECK(next_backoff_ms(spin_backoff::constant(5ms), t, 77) == 5);
}
