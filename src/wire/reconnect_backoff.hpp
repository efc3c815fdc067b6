// How long to wait before the next connection attempt: from the minimum, doubling with every failed
// attempt up to the maximum, with "equal jitter" (half fixed, half random) so that many clients that
// lost the same server do not reconnect in step.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/random.hpp"

namespace deadbolt::detail {

class reconnect_backoff {
 public:
  /// `seed` feeds the jitter (any value; tests pass a fixed one).
  reconnect_backoff(std::int64_t min_ms, std::int64_t max_ms, std::uint64_t seed) noexcept
      : min_ms_(min_ms), max_ms_(max_ms), jitter_(seed) {}

  /// The delay before the next attempt, in [ceiling / 2, ceiling] where the ceiling doubles with each
  /// call since the last reset().
  std::int64_t next_delay_ms() noexcept {
    const unsigned shift = std::min(attempts_, 16u);
    const std::int64_t ceiling = std::min<std::int64_t>(max_ms_, min_ms_ << shift);
    const std::int64_t half = ceiling / 2;
    ++attempts_;
    return half + static_cast<std::int64_t>(jitter_.next() % static_cast<std::uint64_t>(half + 1));
  }
  /// A connection succeeded: the next delay starts from the minimum again.
  void reset() noexcept { attempts_ = 0; }

 private:
  std::int64_t min_ms_;
  std::int64_t max_ms_;
  pseudo_random jitter_;
  unsigned attempts_ = 0;
};

}  // namespace deadbolt::detail
