// Test helpers for the semaphore and latch tests: wait (bounded) until a channel has `n` subscribers,
// and until the waiters' scripts have settled.
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

/// Waits (bounded) until the server has run at least `at_least` scripts (EVAL and EVALSHA calls) and
/// no more for a while. A waiter re-checks once its subscription takes effect (a message published
/// before it was missed), so a channel's subscriber count alone does not mean its waiters are parked:
/// a server killed then may take a re-check with it, whose outcome is unknown (a permit has no owner
/// to ask). The server has run it once it is counted; its reply is then ahead of the connection's end.
inline bool scripts_settle(const redis_server& redis, long at_least,
                           std::chrono::milliseconds limit = std::chrono::milliseconds(5000)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  const auto script_calls = [&] { return redis.calls_of("eval") + redis.calls_of("evalsha"); };
  long last = -1;
  int unchanged = 0;
  while (std::chrono::steady_clock::now() < end) {
    const long now = script_calls();
    unchanged = now == last ? unchanged + 1 : 0;
    last = now;
    if (now >= at_least && unchanged >= 3) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace deadbolt::test
