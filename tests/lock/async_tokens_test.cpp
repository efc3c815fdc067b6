// One async operation serves every completion token: callbacks (the other tests), futures, C++20
// coroutines; and its wait can be cancelled per operation.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::test::call;

using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("asio::use_future") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  auto lock = c.lock(unique_name("future"));
  std::future<bool> got = lock.async_try_lock(1, 1s, 0ms, asio::use_future);
  CHECK(got.get());
  std::future<std::int64_t> count = lock.async_hold_count(1, asio::use_future);
  CHECK(count.get() == 1);
  lock.async_unlock(1, asio::use_future).get();
  // An error arrives as a std::system_error from get().
  std::future<void> bad = lock.async_unlock(1, asio::use_future);
  bad.wait();
  io.drain();
  CHECK_THROWS_AS(bad.get(), std::system_error);
}

#if defined(ASIO_HAS_CO_AWAIT)  // not with clang 14 on libstdc++, where Asio disables co_await
TEST_CASE("C++20 coroutines with asio::use_awaitable") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("coro");
  std::promise<std::int64_t> result;
  asio::co_spawn(
      io.io,
      [&]() -> asio::awaitable<void> {
        auto lock = c.lock(name);
        co_await lock.async_lock(5, asio::use_awaitable);
        co_await lock.async_lock(5, asio::use_awaitable);
        const std::int64_t count = co_await lock.async_hold_count(5, asio::use_awaitable);
        co_await lock.async_unlock(5, asio::use_awaitable);
        co_await lock.async_unlock(5, asio::use_awaitable);
        const bool still = co_await lock.async_is_locked(asio::use_awaitable);
        result.set_value(still ? -1 : count);
      },
      asio::detached);
  auto f = result.get_future();
  REQUIRE(f.wait_for(10s) == std::future_status::ready);
  CHECK(f.get() == 2);
}
#endif

TEST_CASE("cancelling a waiting try_lock ends it promptly and frees its waiter slot") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  cfg.max_waiters = 1;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), cfg);
  const std::string name = unique_name("cancel");
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(name).async_lock(1, cb); }).ec);

  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  const auto started = std::chrono::steady_clock::now();
  asio::post(io.io, [&] {
    c.lock(name).async_try_lock(2, 20s, 0ms,
                                asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, bool) {
                                  done.set_value(ec);
                                }));
  });
  std::this_thread::sleep_for(200ms);
  asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto f = done.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
  CHECK(std::chrono::steady_clock::now() - started < 5s);

  // The single waiter slot is free again.
  auto again = call<bool>([&](auto cb) { c.lock(name).async_try_lock(3, 100ms, 0ms, cb); });
  CHECK_FALSE(again.ec);
  CHECK_FALSE(again.value);
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(name).async_unlock(1, cb); }).ec);
}
