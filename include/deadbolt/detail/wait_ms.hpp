// A blocking call's wait as whole milliseconds, rounded up, without overflowing: a wait longer than the
// engine can count (hours::max(), time_point::max() - now) becomes the largest count, which the
// engine treats as "no deadline".
#pragma once

#include <chrono>
#include <cstdint>
#include <limits>

namespace deadbolt::detail {

template <typename Rep, typename Period>
std::int64_t wait_ms(const std::chrono::duration<Rep, Period>& wait) {
  constexpr auto most = std::numeric_limits<std::int64_t>::max();
  // Compared as floating point: converting a huge integer duration to milliseconds would overflow.
  const double ms = std::chrono::duration<double, std::milli>(wait).count();
  if (!(ms < static_cast<double>(most) / 2)) return ms > 0 ? most : 0;  // also NaN → one attempt
  if (ms <= 0) return 0;
  return std::chrono::ceil<std::chrono::milliseconds>(wait).count();
}

}  // namespace deadbolt::detail
