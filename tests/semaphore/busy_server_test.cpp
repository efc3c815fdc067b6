// A server that answers BUSY (another client's script runs past busy-reply-threshold): the command did
// not run, so a wait rides it out within its deadline, for locks, semaphores and the latch alike (the
// same path as LOADING, which tests/core/hostile_server_test.cpp feeds). Its own server: it is kept busy.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <future>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::unique_name;

namespace {

deadbolt::config busy_config(const deadbolt::test::redis_server& redis) {
  deadbolt::config cfg = deadbolt::test::config_for(redis);
  cfg.command_timeout = 3s;  // a BUSY reply comes at once; the script's own run must not time out
  return cfg;
}

/// Runs a script that keeps the server busy for `ms` (it answers BUSY to others after 100 ms).
std::future<std::string> keep_busy(const deadbolt::test::redis_server& redis, int ms) {
  return std::async(std::launch::async, [&redis, ms] {
    return redis.cli(
        "eval \"local s = redis.call('time') "
        "while true do local t = redis.call('time') "
        "if (t[1] - s[1]) * 1000000 + (t[2] - s[2]) > " +
        std::to_string(ms * 1000) + " then return 1 end end\" 0");
  });
}

/// Waits until the server answers BUSY.
void wait_busy(const deadbolt::test::redis_server& redis) {
  for (int i = 0; i < 100 && redis.cli("ping").rfind("BUSY", 0) != 0; ++i) std::this_thread::sleep_for(20ms);
  REQUIRE(redis.cli("ping").rfind("BUSY", 0) == 0);
}

}  // namespace

TEST_CASE("BUSY: waits ride it out, a single attempt reports it") {
  deadbolt::test::redis_server redis;
  REQUIRE(redis.cli("config set busy-reply-threshold 100") == "OK");
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), busy_config(redis));
  const std::string name = unique_name("busy");
  auto lock = c.lock(name);
  auto sem = c.semaphore(name + "-sem");
  auto latch = c.count_down_latch(name + "-latch");
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(1, cb); }).value);
  REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(1, cb); }).value);  // scripts cached before
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);

  SUBCASE("lock") {
    auto busy = keep_busy(redis, 1200);
    wait_busy(redis);
    const auto once = call<bool>([&](auto cb) { lock.async_try_lock(2, cb); });
    CHECK(once.ec == errc::server_busy);
    const auto waited = call<bool>([&](auto cb) { lock.async_try_lock(2, 10s, 0ms, cb); });
    CHECK_FALSE(waited.ec);
    CHECK(waited.value);
    CHECK(busy.get() == "1");
    CHECK_FALSE(call([&](auto cb) { lock.async_unlock(2, cb); }).ec);
  }
  SUBCASE("semaphore") {
    auto busy = keep_busy(redis, 1200);
    wait_busy(redis);
    const auto waited = call<bool>([&](auto cb) { sem.async_try_acquire(1, 10s, cb); });
    CHECK_FALSE(waited.ec);
    CHECK(waited.value);
    CHECK(busy.get() == "1");
  }
  SUBCASE("latch") {
    REQUIRE(call<bool>([&](auto cb) { latch.async_try_set_count(1, cb); }).value);
    auto busy = keep_busy(redis, 1200);
    wait_busy(redis);
    std::thread opener([&] {
      std::this_thread::sleep_for(1500ms);
      call<std::int64_t>([&](auto cb) { latch.async_count_down(cb); });
    });
    const auto waited = call<bool>([&](auto cb) { latch.async_await(10s, cb); });
    CHECK_FALSE(waited.ec);
    CHECK(waited.value);
    CHECK(busy.get() == "1");
    opener.join();
  }
}
