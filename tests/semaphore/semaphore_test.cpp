// The semaphore (Redisson RSemaphore, docs/protocol.md §8) against a real redis-server.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"
#include "semaphore/pubsub.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("semaphore: Redisson's data layout and operations") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("sem-layout");
  auto s = c.semaphore(name);

  CHECK(call<std::int64_t>([&](auto cb) { s.async_available_permits(cb); }).value == 0);
  CHECK_FALSE(call<bool>([&](auto cb) { s.async_try_acquire(1, cb); }).value);  // missing key = 0 permits
  CHECK(call<bool>([&](auto cb) { s.async_try_set_permits(3, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { s.async_try_set_permits(5, cb); }).value);
  CHECK(redis.cli("type " + name) == "string");
  CHECK(redis.cli("get " + name) == "3");
  CHECK(call<bool>([&](auto cb) { s.async_try_acquire(2, cb); }).value);
  CHECK(redis.cli("get " + name) == "1");
  CHECK_FALSE(call<bool>([&](auto cb) { s.async_try_acquire(2, cb); }).value);
  CHECK(call<bool>([&](auto cb) { s.async_try_acquire(0, cb); }).value);  // zero: true, nothing sent
  REQUIRE_FALSE(call([&](auto cb) { s.async_release(2, cb); }).ec);
  CHECK(redis.cli("get " + name) == "3");
  CHECK(call<std::int64_t>([&](auto cb) { s.async_add_permits(2, cb); }).value == 5);
  CHECK(call<std::int64_t>([&](auto cb) { s.async_add_permits(-1, cb); }).value == 4);
  CHECK(call<std::int64_t>([&](auto cb) { s.async_available_permits(cb); }).value == 4);
  CHECK(call<std::int64_t>([&](auto cb) { s.async_drain_permits(cb); }).value == 4);
  CHECK(redis.cli("get " + name) == "0");
  CHECK(redis.cli("pttl " + name) == "-1");  // no TTL, as Redisson

  // Invalid arguments are refused without a request.
  CHECK(call<bool>([&](auto cb) { s.async_try_acquire(-1, cb); }).ec == errc::invalid_argument);
  CHECK(call([&](auto cb) { s.async_release(-2, cb); }).ec == errc::invalid_argument);
  CHECK(call<bool>([&](auto cb) { s.async_try_set_permits(-2, cb); }).ec == errc::invalid_argument);

  // A key of another type.
  const std::string other = unique_name("sem-wrongtype");
  redis.cli("hset " + other + " f 1");
  auto w = c.semaphore(other);
  CHECK(call<bool>([&](auto cb) { w.async_try_acquire(1, cb); }).ec == errc::wrong_type);
  CHECK(call([&](auto cb) { w.async_release(1, cb); }).ec == errc::wrong_type);
  CHECK(call<std::int64_t>([&](auto cb) { w.async_available_permits(cb); }).ec == errc::wrong_type);
}

TEST_CASE("semaphore: a release publishes the new count on redisson_sc:{name} and wakes a waiter at once") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  for (const std::string& name : {unique_name("sem-wake"), "{" + unique_name("sem") + "}:braced"}) {
    const std::string channel =
        name[0] == '{' ? "redisson_sc:" + name : "redisson_sc:{" + name + "}";
    std::promise<std::pair<std::error_code, bool>> got;
    b.semaphore(name).async_try_acquire(2, 10s, [&](std::error_code ec, bool ok) { got.set_value({ec, ok}); });
    REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
    REQUIRE_FALSE(call([&](auto cb) { a.semaphore(name).async_release(1, cb); }).ec);  // not enough yet
    const auto released = std::chrono::steady_clock::now();
    REQUIRE_FALSE(call([&](auto cb) { a.semaphore(name).async_release(1, cb); }).ec);
    auto f = got.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    const auto r = f.get();
    CHECK_FALSE(r.first);
    CHECK(r.second);
    // Woken by the message, not by the periodic re-check (5 s); generous for a loaded CI machine.
    CHECK(std::chrono::steady_clock::now() - released < 3s);
    CHECK(redis.cli("get '" + name + "'") == "0");
  }
}

TEST_CASE("semaphore: 8 contenders never exceed the permits, and all get through") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("sem-contend");
  constexpr int permits = 3;
  REQUIRE(call<bool>([&](auto cb) { a.semaphore(name).async_try_set_permits(permits, cb); }).value);
  std::atomic<int> inside{0}, most{0}, errors{0}, rounds{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      auto s = (t % 2 == 0 ? a : b).semaphore(name);
      for (int i = 0; i < 6; ++i) {
        if (call([&](auto cb) { s.async_acquire(1, cb); }, std::chrono::seconds(20)).ec) {
          ++errors;
          continue;
        }
        const int now = ++inside;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        std::this_thread::sleep_for(2ms);
        --inside;
        ++rounds;
        if (call([&](auto cb) { s.async_release(1, cb); }).ec) ++errors;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(errors == 0);
  CHECK(rounds == 48);
  CHECK(most <= permits);
  CHECK(most >= 2);
  CHECK(redis.cli("get " + name) == std::to_string(permits));
}

TEST_CASE("semaphore: a cancelled wait takes nothing; a timed wait ends at its deadline; shutdown ends waits") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("sem-cancel");
  const std::string channel = "redisson_sc:{" + name + "}";
  auto s = c.semaphore(name);

  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  asio::post(io.io, [&] {
    s.async_acquire(1, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto f = done.get_future();
  REQUIRE(f.wait_for(3s) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
  REQUIRE_FALSE(call([&](auto cb) { s.async_release(1, cb); }).ec);
  CHECK(redis.cli("get " + name) == "1");  // the cancelled waiter took nothing

  const auto started = std::chrono::steady_clock::now();
  auto timed = call<bool>([&](auto cb) { s.async_try_acquire(2, 300ms, cb); });
  CHECK_FALSE(timed.ec);
  CHECK_FALSE(timed.value);
  CHECK(std::chrono::steady_clock::now() - started >= 290ms);
  CHECK(std::chrono::steady_clock::now() - started < 3s);

  std::promise<std::error_code> ended;
  deadbolt::client d(io.executor(), config_for(redis));
  d.semaphore(name).async_acquire(5, [&](std::error_code ec) { ended.set_value(ec); });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  d.shutdown();
  auto e = ended.get_future();
  REQUIRE(e.wait_for(3s) == std::future_status::ready);
  CHECK(e.get() == errc::shutting_down);
}

TEST_CASE("semaphore: the waiter table's bound is reported") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::config cfg = config_for(redis);
  cfg.max_waiters = 1;
  deadbolt::client c(io.executor(), cfg);
  const std::string name = unique_name("sem-full");
  std::promise<std::error_code> first;
  c.semaphore(name).async_acquire(1, [&](std::error_code ec) { first.set_value(ec); });
  REQUIRE(deadbolt::test::subscribers_reach(redis, "redisson_sc:{" + name + "}", 1));
  CHECK(call<bool>([&](auto cb) { c.semaphore(name).async_try_acquire(1, 1s, cb); }).ec == errc::waiter_table_full);
  REQUIRE_FALSE(call([&](auto cb) { c.semaphore(name).async_release(1, cb); }).ec);
  auto f = first.get_future();
  REQUIRE(f.wait_for(3s) == std::future_status::ready);
  CHECK_FALSE(f.get());
}

TEST_CASE("blocking_semaphore") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client c(config_for(redis));
  const std::string name = unique_name("sem-blocking");
  auto s = c.semaphore(name);
  std::error_code ec;
  CHECK(s.try_set_permits(1, ec));
  CHECK_FALSE(ec);
  s.acquire();
  CHECK_FALSE(s.try_acquire());
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(s.try_acquire_for(1, 200ms));
  CHECK(std::chrono::steady_clock::now() - started >= 190ms);
  std::thread releaser([&] {
    auto r = c.semaphore(name);
    r.release(1);
  });
  CHECK(s.try_acquire(1, 5s, ec));
  CHECK_FALSE(ec);
  releaser.join();
  s.release(1);
  CHECK(s.available_permits(ec) == 1);
  CHECK(s.add_permits(2, ec) == 3);
  CHECK(s.drain_permits(ec) == 3);
  s.acquire(-1, ec);
  CHECK(ec == errc::invalid_argument);
}

#if defined(__cpp_exceptions)
TEST_CASE("semaphore and latch with asio::use_future") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("sem-future");
  auto s = c.semaphore(name);
  CHECK(s.async_try_set_permits(1, asio::use_future).get());
  CHECK(s.async_try_acquire(1, 100ms, asio::use_future).get());
  CHECK_FALSE(s.async_try_acquire(1, asio::use_future).get());
  s.async_release(1, asio::use_future).get();
  CHECK(s.async_available_permits(asio::use_future).get() == 1);
  auto p = c.expirable_semaphore(name + "-p");
  CHECK(p.async_try_set_permits(1, asio::use_future).get());
  const deadbolt::permit_id id = p.async_acquire(1s, asio::use_future).get();
  p.async_release(id, asio::use_future).get();
  auto l = c.count_down_latch(name + "-l");
  CHECK(l.async_await(0ms, asio::use_future).get());
}
#endif
