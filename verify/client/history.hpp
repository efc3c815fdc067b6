// The history the harness checks (docs/verification.md, "The history"): one JSON object per line on
// standard output, stamped with CLOCK_MONOTONIC in nanoseconds (std::chrono::steady_clock on Linux),
// the clock the harness and every other client use, so that one clock orders all events.
#pragma once
#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>

namespace verify {

inline std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// One event: {"time": ..., "process": ..., "type": ..., "f": ..., more fields}. Written whole, by one
/// write(2), so that lines of different threads never interleave.
class event {
 public:
  event(std::string_view process, std::string_view type, std::string_view f, std::int64_t time = now_ns());
  event& with(std::string_view key, std::string_view value);
  event& with(std::string_view key, const char* value) { return with(key, std::string_view(value)); }
  event& with(std::string_view key, std::int64_t value);
  event& with(std::string_view key, std::uint64_t value) { return with(key, static_cast<std::int64_t>(value)); }
  event& with(std::string_view key, int value) { return with(key, static_cast<std::int64_t>(value)); }
  std::int64_t time() const { return time_; }
  /// Writes the line to standard output.
  void emit();

 private:
  std::int64_t time_;
  std::string line_;
};

}  // namespace verify
