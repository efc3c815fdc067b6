// The count-down latch (Redisson RCountDownLatch, docs/protocol.md §10) against a real redis-server.
#include <doctest/doctest.h>

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

TEST_CASE("latch: Redisson's data layout and operations") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("latch-layout");
  auto l = c.count_down_latch(name);
  CHECK(call<std::int64_t>([&](auto cb) { l.async_count(cb); }).value == 0);
  CHECK(call<bool>([&](auto cb) { l.async_await(0ms, cb); }).value);  // no latch: open
  CHECK(call<bool>([&](auto cb) { l.async_try_set_count(2, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { l.async_try_set_count(5, cb); }).value);
  CHECK(redis.cli("type " + name) == "string");
  CHECK(redis.cli("get " + name) == "2");
  CHECK(call<std::int64_t>([&](auto cb) { l.async_count(cb); }).value == 2);
  CHECK(call<std::int64_t>([&](auto cb) { l.async_count_down(cb); }).value == 1);
  CHECK(call<std::int64_t>([&](auto cb) { l.async_count_down(cb); }).value == 0);
  CHECK(redis.cli("exists " + name) == "0");  // deleted at zero
  CHECK(call<bool>([&](auto cb) { l.async_try_set_count(1, cb); }).value);
  CHECK(call<bool>([&](auto cb) { l.async_delete(cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { l.async_delete(cb); }).value);
  CHECK(call<bool>([&](auto cb) { l.async_try_set_count(-1, cb); }).ec == errc::invalid_argument);

  redis.cli("hset " + name + "-hash f 1");
  CHECK(call<std::int64_t>([&](auto cb) { c.count_down_latch(name + "-hash").async_count_down(cb); }).ec ==
        errc::wrong_type);
  CHECK(call<bool>([&](auto cb) { c.count_down_latch(name + "-hash").async_await(0ms, cb); }).ec == errc::wrong_type);
}

TEST_CASE("latch: every awaiter is released at zero; the channel always gets braces") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  for (const std::string& name : {unique_name("latch-all"), "{" + unique_name("latch") + "}:braced"}) {
    const std::string channel = "redisson_countdownlatch__channel__{" + name + "}";
    auto l = a.count_down_latch(name);
    REQUIRE(call<bool>([&](auto cb) { l.async_try_set_count(3, cb); }).value);
    std::vector<std::promise<std::pair<std::error_code, bool>>> got(5);
    std::vector<std::future<std::pair<std::error_code, bool>>> results;
    for (auto& g : got) results.push_back(g.get_future());
    for (std::size_t i = 0; i < got.size(); ++i) {
      (i % 2 == 0 ? a : b).count_down_latch(name).async_await(10s, [&got, i](std::error_code ec, bool zero) {
        got[i].set_value({ec, zero});
      });
    }
    REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 2));  // one subscription per client
    REQUIRE(call<std::int64_t>([&](auto cb) { l.async_count_down(cb); }).value == 2);
    REQUIRE(call<std::int64_t>([&](auto cb) { b.count_down_latch(name).async_count_down(cb); }).value == 1);
    for (auto& r : results) CHECK(r.wait_for(0ms) == std::future_status::timeout);
    const auto zero = std::chrono::steady_clock::now();
    REQUIRE(call<std::int64_t>([&](auto cb) { l.async_count_down(cb); }).value == 0);
    for (auto& f : results) {
      REQUIRE(f.wait_for(5s) == std::future_status::ready);
      const auto r = f.get();
      CHECK_FALSE(r.first);
      CHECK(r.second);
    }
    CHECK(std::chrono::steady_clock::now() - zero < 3s);  // the message, not the 5 s re-check
  }
}

TEST_CASE("latch: await times out, can be cancelled, ends at shutdown") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("latch-timeout");
  const std::string channel = "redisson_countdownlatch__channel__{" + name + "}";
  auto l = c.count_down_latch(name);
  REQUIRE(call<bool>([&](auto cb) { l.async_try_set_count(1, cb); }).value);
  const auto started = std::chrono::steady_clock::now();
  auto r = call<bool>([&](auto cb) { l.async_await(250ms, cb); });
  CHECK_FALSE(r.ec);
  CHECK_FALSE(r.value);
  CHECK(std::chrono::steady_clock::now() - started >= 240ms);
  CHECK(std::chrono::steady_clock::now() - started < 3s);

  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  asio::post(io.io, [&] {
    l.async_await(asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto f = done.get_future();
  REQUIRE(f.wait_for(3s) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);

  deadbolt::client d(io.executor(), config_for(redis));
  std::promise<std::error_code> ended;
  d.count_down_latch(name).async_await([&](std::error_code ec) { ended.set_value(ec); });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  d.shutdown();
  auto e = ended.get_future();
  REQUIRE(e.wait_for(3s) == std::future_status::ready);
  CHECK(e.get() == errc::shutting_down);
}

TEST_CASE("blocking_count_down_latch") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client c(config_for(redis));
  const std::string name = unique_name("latch-blocking");
  auto l = c.count_down_latch(name);
  std::error_code ec;
  CHECK(l.try_set_count(2, ec));
  CHECK_FALSE(l.await_for(100ms));
  std::thread t([&] {
    auto other = c.count_down_latch(name);
    other.count_down();
    other.count_down();
  });
  l.await();
  t.join();
  CHECK(l.count(ec) == 0);
  CHECK(l.await_for(0ms, ec));
  CHECK_FALSE(ec);
}
