// Durations on the command line ("1m30s") and in messages ("1m30s", "1.5s", "250ms").
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace deadbolt::cli {

/// Parses one or more number+unit parts, largest unit first: "500ms", "10s", "1m30s", "1h2m3.5s"; a
/// bare number is seconds ("1.5" is 1500 ms). Units: h, m, s, ms.
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// "250ms", "1.5s", "2m3s", "1h2m".
std::string format_duration(std::chrono::milliseconds d);

/// Milliseconds since the Unix epoch: the clock lease ends are written in (Redisson's scripts compare
/// with it).
std::int64_t wall_clock_ms();

}  // namespace deadbolt::cli
