// The lines a client's log hook was given, kept for a test to search (any thread may log).
#pragma once

#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/observability.hpp"

namespace deadbolt::test {

struct log_lines {
  std::mutex mutex;
  std::vector<std::string> lines;
  /// A hook for config::log that keeps every line; `*this` must outlive the client.
  deadbolt::log_hook hook() {
    return [this](deadbolt::log_level, std::string_view message) {
      std::lock_guard<std::mutex> hold(mutex);
      lines.emplace_back(message);
    };
  }
  /// Every line so far, one a line (for a failed check's message).
  std::string joined() {
    std::lock_guard<std::mutex> hold(mutex);
    std::string out;
    for (const auto& l : lines) out += l + '\n';
    return out;
  }
  bool any_contains(const std::string& words) {
    std::lock_guard<std::mutex> hold(mutex);
    for (const auto& l : lines) {
      if (l.find(words) != std::string::npos) return true;
    }
    return false;
  }
};

}  // namespace deadbolt::test
