// The spin lock's backoff sequence (docs/protocol.md §5) as a pure function, so it can be tested alone.
#pragma once

#include <algorithm>
#include <cstdint>

#include "deadbolt/spin_backoff.hpp"

namespace deadbolt::detail {

/// One wait's progress through the sequence: reset it when an acquisition starts.
struct backoff_state {
  std::int64_t last_ms = -1;  ///< the previous pause (-1: none yet)
  std::int64_t failures = 0;  ///< pauses taken so far
};

/// The next pause in ms. `random` is any random number: the jitter is `random % failures` (after
/// counting this failure), i.e. an integer in [0, failures) as Redisson's nextLong(++fails).
inline std::int64_t next_backoff_ms(const spin_backoff& b, backoff_state& s, std::uint64_t random) {
  if (b.kind == spin_backoff::policy::constant) {
    ++s.failures;
    return s.last_ms = std::max<std::int64_t>(b.delay.count(), 0);
  }
  const std::int64_t max = std::max<std::int64_t>(b.max_delay.count(), 0);
  const std::int64_t first = std::min(std::max<std::int64_t>(b.initial_delay.count(), 0), max);
  ++s.failures;
  if (s.last_ms < 0) return s.last_ms = first;
  if (s.last_ms >= max) return s.last_ms = max;
  const std::int64_t jitter = static_cast<std::int64_t>(random % static_cast<std::uint64_t>(s.failures));
  const std::int64_t mult = std::max<std::int64_t>(b.multiplier, 1);
  // last_ms < max, so last_ms * mult cannot overflow for any sane max (cap the factor just in case).
  const std::int64_t grown = s.last_ms > max / mult ? max : s.last_ms * mult + jitter;
  return s.last_ms = std::min(max, std::max(grown, s.last_ms));
}

}  // namespace deadbolt::detail
