// Semaphore and latch waiters through a server outage (their own redis-server, which the tests stop
// and restart): a waiter keeps waiting through the outage, is woken after the restart, and one whose
// deadline passes during the outage ends within about command_timeout of it.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"
#include "semaphore/pubsub.hpp"

using namespace std::chrono_literals;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("semaphore waiters through a restart: one is woken after it, one ends at its deadline") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::config cfg = config_for(redis);
  cfg.command_timeout = 500ms;
  deadbolt::client a(io.executor(), cfg);
  deadbolt::client b(io.executor(), cfg);
  const std::string name = unique_name("sem-outage");
  const std::string channel = "redisson_sc:{" + name + "}";

  std::promise<std::pair<std::error_code, bool>> patient, hasty;
  b.semaphore(name).async_try_acquire(1, 20s, [&](std::error_code ec, bool ok) { patient.set_value({ec, ok}); });
  b.semaphore(name).async_try_acquire(1, 800ms, [&](std::error_code ec, bool ok) { hasty.set_value({ec, ok}); });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  // Each waiter's first attempt and its re-check once subscribed: not in flight when the server dies.
  REQUIRE(deadbolt::test::scripts_settle(redis, 4));
  const auto stopped = std::chrono::steady_clock::now();
  redis.stop();

  // The one whose deadline passes during the outage ends within about command_timeout of it.
  auto h = hasty.get_future();
  REQUIRE(h.wait_for(3s) == std::future_status::ready);
  const auto hr = h.get();
  CHECK_FALSE(hr.second);
  CHECK(std::chrono::steady_clock::now() - stopped < 800ms + 500ms + 1500ms);  // slack for emulated runs

  redis.start();  // empty: the server keeps no data
  auto p = patient.get_future();
  CHECK(p.wait_for(0ms) == std::future_status::timeout);  // still waiting
  REQUIRE(call([&](auto cb) { a.semaphore(name).async_release(1, cb); }).ec == std::error_code());
  REQUIRE(p.wait_for(7s) == std::future_status::ready);
  const auto pr = p.get();
  CHECK_FALSE(pr.first);
  CHECK(pr.second);
  CHECK(redis.cli("get " + name) == "0");
}
