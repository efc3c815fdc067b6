#include "duration.hpp"

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace deadbolt::cli {
namespace {

// Milliseconds per unit, largest first; each part's unit must come after the previous one's.
struct unit {
  std::string_view name;
  double ms;
};
constexpr unit units[] = {{"h", 3'600'000}, {"m", 60'000}, {"s", 1000}, {"ms", 1}};
constexpr std::size_t no_unit = sizeof units / sizeof units[0];

bool is_number_char(char c) { return (c >= '0' && c <= '9') || c == '.'; }

}  // namespace

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  double total = 0;
  std::size_t next_unit = 0;  // units before this one were used already (or are out of order)
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() && is_number_char(text[digits])) ++digits;
    if (digits == 0) return std::nullopt;
    const std::string number(text.substr(0, digits));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size() || !std::isfinite(value)) return std::nullopt;
    text.remove_prefix(digits);
    std::size_t letters = 0;
    while (letters < text.size() && !is_number_char(text[letters])) ++letters;
    const std::string_view name = text.substr(0, letters);
    text.remove_prefix(letters);
    if (name.empty()) {  // a bare number: seconds, and only on its own
      if (next_unit != 0 || !text.empty()) return std::nullopt;
      total = value * 1000;
      break;
    }
    std::size_t u = next_unit;
    while (u < no_unit && units[u].name != name) ++u;
    if (u == no_unit) return std::nullopt;
    total += value * units[u].ms;
    next_unit = u + 1;
  }
  if (total > 1e15) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(total)));
}

std::string format_duration(std::chrono::milliseconds d) {
  const long long ms = d.count();
  char buf[48];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", ms);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else if (ms < 3'600'000) {
    std::snprintf(buf, sizeof buf, "%lldm%llds", ms / 60'000, (ms % 60'000) / 1000);
  } else {
    std::snprintf(buf, sizeof buf, "%lldh%lldm", ms / 3'600'000, (ms % 3'600'000) / 60'000);
  }
  return buf;
}

std::int64_t wall_clock_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

}  // namespace deadbolt::cli
