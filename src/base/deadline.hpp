// Where a caller's duration meets the monotonic clock: saturating, so "wait milliseconds::max()" is a
// wait without end rather than an overflow into the past.
#pragma once

#include <cstdint>
#include <limits>

#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {

constexpr std::int64_t ms_to_ns = 1'000'000;
/// The longest lease a script may set (2^40 ms, about 35 years): PEXPIRE is sure to accept it.
constexpr std::int64_t max_lease_ms = std::int64_t{1} << 40;

/// The monotonic time `wait_ms` after `now_ns`, or -1 (no deadline) when `wait_ms` is negative or
/// lies beyond what the clock can represent. For the sans-I/O cores, which are told the time.
inline std::int64_t deadline_at(std::int64_t now_ns, std::int64_t wait_ms) {
  if (wait_ms < 0) return -1;
  if (wait_ms > (std::numeric_limits<std::int64_t>::max() - now_ns) / ms_to_ns) return -1;
  return now_ns + wait_ms * ms_to_ns;
}

/// The monotonic time `wait_ms` from now, or -1 (no deadline): deadline_at on the clock.
inline std::int64_t deadline_after_ms(std::int64_t wait_ms) { return deadline_at(port::monotonic_ns(), wait_ms); }

/// A lease the caller may ask for: 0 or less for the watchdog's, else at most max_lease_ms.
inline bool valid_lease_ms(std::int64_t lease_ms) { return lease_ms <= max_lease_ms; }

}  // namespace deadbolt::detail
