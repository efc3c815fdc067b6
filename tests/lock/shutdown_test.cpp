// shutdown() against a real redis-server: what the client already decided to send (a release, an
// undo, an unlock, leaving a fair queue) reaches the server before the connections close; nothing it
// held stays behind for a lease.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/log_lines.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::eventually;
using deadbolt::test::unique_name;

namespace {

// An io_context run on its own thread by a loop that runs it again after an exception escapes run(),
// as an Asio program that survives a throwing handler does; it counts them.
struct surviving_io_thread {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::atomic<int> escaped{0};
  std::thread thread{[this] {
    for (;;) {
#if defined(__cpp_exceptions)
      try {
        io.run();
        return;
      } catch (...) {
        ++escaped;
      }
#else
      io.run();
      return;
#endif
    }
  }};

  ~surviving_io_thread() {
    work.reset();
    thread.join();
  }
};

// The log lines a client wrote (config::log).
using deadbolt::test::log_lines;

}  // namespace

TEST_CASE("a lease-lost handler may shut its client down, then go on using what it captured") {
  // A service that loses leadership shuts its client down from the handler. shutdown() drops the
  // handler; it must not be destroyed while it runs (ASan: heap-use-after-free on `state`).
  deadbolt::test::redis_server redis;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 300ms;
  const std::string name = unique_name("lost-shutdown");
  auto saw = std::make_shared<std::promise<std::string>>();
  deadbolt::test::io_thread io;
  {
    deadbolt::client client(io.executor(), cfg);
    auto lock = client.lock(name);
    const std::string state = "the handler's own state, long enough to live on the heap";
    client.on_lease_lost([&client, saw, state](std::string_view lost, deadbolt::owner_id) {
      client.shutdown();
      saw->set_value(state + ": " + std::string(lost));  // after shutdown(): its captures are still there
    });
    REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);
    REQUIRE(redis.cli("del " + name) == "1");  // the next renewal finds it gone
    auto f = saw->get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get() == state + ": " + name);
    CHECK(call([&](auto cb) { lock.async_lock(2, cb); }).ec == errc::shutting_down);
  }
  io.drain();
}

TEST_CASE("a lease-lost handler may destroy its client, and the last handle with it") {
  deadbolt::test::redis_server redis;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 300ms;
  const std::string name = unique_name("lost-destroy");
  auto saw = std::make_shared<std::promise<std::string>>();
  deadbolt::test::io_thread io;
  auto client = std::make_unique<deadbolt::client>(io.executor(), cfg);
  auto lock = std::make_unique<deadbolt::reentrant_lock>(client->lock(name));
  REQUIRE_FALSE(call([&](auto cb) { lock->async_lock(1, cb); }).ec);
  const std::string state = "the handler's own state, long enough to live on the heap";
  client->on_lease_lost([&client, &lock, saw, state](std::string_view, deadbolt::owner_id) {
    lock.reset();
    client.reset();  // the client and every handle of it go, from inside the handler
    saw->set_value(state);
  });
  io.drain();  // the handler is set
  REQUIRE(redis.cli("del " + name) == "1");
  auto f = saw->get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == state);
  io.drain();
}

#if defined(__cpp_exceptions)
TEST_CASE("a throwing lease-lost handler or metrics hook is contained: logged, and the watchdog renews on") {
  struct throwing_metrics final : deadbolt::metrics_hook {
    std::atomic<int> renewals{0};
    void on_renewal(std::size_t) override {
      ++renewals;
      throw std::runtime_error("the metrics hook failed");
    }
  };
  deadbolt::test::redis_server redis;
  auto metrics = std::make_shared<throwing_metrics>();
  log_lines log;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 300ms;  // renewed every 100 ms
  cfg.metrics = metrics;
  cfg.log = log.hook();
  const std::string kept = unique_name("throwing-kept"), lost = unique_name("throwing-lost");
  std::atomic<int> handler_calls{0};
  {
    surviving_io_thread io;
    deadbolt::client client(io.io.get_executor(), cfg);
    client.on_lease_lost([&](std::string_view, deadbolt::owner_id) {
      ++handler_calls;
      throw std::runtime_error("the lease-lost handler failed");
    });
    auto keep = client.lock(kept);
    auto lose = client.lock(lost);
    REQUIRE_FALSE(call([&](auto cb) { keep.async_lock(1, cb); }).ec);
    REQUIRE_FALSE(call([&](auto cb) { lose.async_lock(1, cb); }).ec);
    REQUIRE(redis.cli("del " + lost) == "1");
    REQUIRE(eventually([&] { return handler_calls == 1; }, 3000ms));
    std::this_thread::sleep_for(900ms);  // three leases: renewals throwing all along
    CHECK(io.escaped == 0);
    CHECK(metrics->renewals > 6);
    CHECK(std::stoll(redis.cli("pttl " + kept)) > 0);
    CHECK_FALSE(call<bool>([&](auto cb) { keep.async_lease_lost(1, cb); }).value);
    CHECK(log.any_contains("the lease-lost handler failed"));
    CHECK(log.any_contains("the metrics hook failed"));
    CHECK_FALSE(call([&](auto cb) { keep.async_unlock(1, cb); }).ec);
    client.shutdown();
  }
}
#endif

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
