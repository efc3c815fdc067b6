// shutdown() against a real redis-server: what the client already decided to send (a release, an
// undo, an unlock, leaving a fair queue) reaches the server before the connections close; nothing it
// held stays behind for a lease.
#include <doctest/doctest.h>

#include <chrono>
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
using deadbolt::test::config_for;
using deadbolt::test::eventually;
using deadbolt::test::unique_name;

namespace {

}  // namespace

TEST_CASE("a fair waiter whose client shuts down leaves the queue") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client waiter(io.executor(), config_for(redis));
  deadbolt::client later(io.executor(), config_for(redis));
  const std::string name = unique_name("fair-shutdown");
  auto held = holder.fair_lock(name);
  auto wanted = waiter.fair_lock(name);
  REQUIRE(call<bool>([&](auto cb) { held.async_try_lock(1, 0ms, 0ms, cb); }).value);
  std::promise<std::error_code> gave_up;
  wanted.async_try_lock(2, 20s, 0ms, [&](std::error_code ec, bool) { gave_up.set_value(ec); });
  REQUIRE(eventually([&] { return redis.cli("llen redisson_lock_queue:{" + name + "}") == "1"; }, 3000ms));
  waiter.shutdown();
  auto f = gave_up.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == errc::shutting_down);
  CHECK(redis.cli("llen redisson_lock_queue:{" + name + "}") == "0");
  CHECK_FALSE(call([&](auto cb) { held.async_unlock(1, cb); }).ec);
  auto next = later.fair_lock(name);
  CHECK(call<bool>([&](auto cb) { next.async_try_lock(3, cb); }).value);  // not blocked by a ghost
  CHECK_FALSE(call([&](auto cb) { next.async_unlock(3, cb); }).ec);
}

TEST_CASE("a give-back decided before shutdown is sent before the connection closes") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  const std::string name = unique_name("give-back");

  SUBCASE("an acquire cancelled in flight that succeeded: released, though the caller shuts down at once") {
    deadbolt::client c(io.executor(), config_for(redis));
    auto lock = c.lock(name);
    asio::cancellation_signal signal;
    std::promise<std::error_code> done;
    asio::post(io.io, [&] {
      lock.async_try_lock(1, 5s, 0ms, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, bool) {
                            c.shutdown();  // what `deadbolt run` does on SIGINT
                            done.set_value(ec);
                          }));
      signal.emit(asio::cancellation_type::terminal);  // the request is already on its way
    });
    auto f = done.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
    CHECK(redis.cli("exists " + name) == "0");  // given back before the caller heard of the cancel
  }
  SUBCASE("a semaphore acquire cancelled in flight: the permit comes back") {
    deadbolt::client c(io.executor(), config_for(redis));
    auto sem = c.semaphore(name);
    REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(1, cb); }).value);
    asio::cancellation_signal signal;
    std::promise<std::error_code> done;
    asio::post(io.io, [&] {
      sem.async_try_acquire(1, 5s, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, bool) {
                              c.shutdown();
                              done.set_value(ec);
                            }));
      signal.emit(asio::cancellation_type::terminal);
    });
    auto f = done.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
    CHECK(redis.cli("get " + name) == "1");  // given back before the caller heard of the cancel
  }
  SUBCASE("an unlock queued when shutdown() is called") {
    deadbolt::client c(io.executor(), config_for(redis));
    auto lock = c.lock(name);
    REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(1, cb); }).value);
    std::promise<std::error_code> done;
    asio::post(io.io, [&] {
      lock.async_unlock(1, [&](std::error_code ec) { done.set_value(ec); });
      c.shutdown();
    });
    auto f = done.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK_FALSE(f.get());
    CHECK(redis.cli("exists " + name) == "0");
  }
}
