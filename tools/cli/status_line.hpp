// The live line shown on a terminal while `run` waits: who holds the lock, its TTL, how long we waited.
#pragma once

#include <chrono>
#include <cstdio>
#include <string>

#include "deadbolt/reply.hpp"

namespace deadbolt::cli {

/// "1.5s", "250ms", "2m3s".
inline std::string format(std::chrono::milliseconds d) {
  const long long ms = d.count();
  char buf[48];
  if (ms < 1000) {
    std::snprintf(buf, sizeof buf, "%lldms", ms);
  } else if (ms < 60'000) {
    std::snprintf(buf, sizeof buf, "%.1fs", static_cast<double>(ms) / 1000.0);
  } else {
    std::snprintf(buf, sizeof buf, "%lldm%llds", ms / 60'000, (ms % 60'000) / 1000);
  }
  return buf;
}

/// The hash fields of a lock (owner field -> count), skipping a read/write lock's "mode".
inline std::string holders_of(const deadbolt::reply& hash) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    if (hash.elements[i].text == "mode") continue;
    if (!out.empty()) out += ", ";
    out += hash.elements[i].text;
    if (hash.elements[i + 1].text != "1") out += " x" + hash.elements[i + 1].text;
  }
  return out;
}

class status_line {
 public:
  void show(const std::string& name, const deadbolt::reply& holders, long long ttl_ms,
            std::chrono::steady_clock::duration waited) {
    const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited);
    std::string who = holders_of(holders);
    std::string line = "deadbolt: waiting for " + name;
    if (!who.empty()) line += " held by " + who;
    if (ttl_ms >= 0) line += " (ttl " + format(std::chrono::milliseconds(ttl_ms)) + ")";
    line += ", waited " + format(waited_ms);
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    shown_ = true;
  }
  void clear() {
    if (!shown_) return;
    std::fprintf(stderr, "\r\033[K");
    std::fflush(stderr);
    shown_ = false;
  }

 private:
  bool shown_ = false;
};

}  // namespace deadbolt::cli
