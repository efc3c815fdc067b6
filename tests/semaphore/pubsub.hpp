// Test helper for the semaphore and latch tests: wait (bounded) until a channel has `n` subscribers,
// i.e. until a waiter has parked on it.
#pragma once

#include <chrono>
#include <string>
#include <thread>

#include "support/redis_server.hpp"

namespace deadbolt::test {

inline bool subscribers_reach(const redis_server& redis, const std::string& channel, int n,
                              std::chrono::milliseconds limit = std::chrono::milliseconds(3000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  const std::string want = std::to_string(n);
  while (std::chrono::steady_clock::now() < end) {
    std::string out = redis.cli("pubsub numsub '" + channel + "'");
    const auto nl = out.rfind('\n');
    if (nl != std::string::npos && out.substr(nl + 1) == want) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return false;
}

}  // namespace deadbolt::test
