// The spin lock (Redisson RSpinLock, docs/protocol.md §5) against a real redis-server: RLock's data, no
// pub/sub, backoff while busy.
#include <doctest/doctest.h>

#include <atomic>
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
using deadbolt::test::unique_name;

TEST_CASE("a spin lock keeps RLock's hash layout and excludes a reentrant lock of the same name") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("spin-layout");
  auto spin = a.spin_lock(name);
  auto plain = b.lock(name);

  REQUIRE_FALSE(call([&](auto cb) { spin.async_lock(7, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { spin.async_lock(7, cb); }).ec);
  CHECK(redis.cli("type " + name) == "hash");
  CHECK(redis.cli("hget " + name + " " + a.id() + ":7") == "2");
  CHECK(std::stoi(redis.cli("pttl " + name)) > 25000);
  CHECK_FALSE(call<bool>([&](auto cb) { plain.async_try_lock(1, cb); }).value);

  REQUIRE_FALSE(call([&](auto cb) { spin.async_unlock(7, cb); }).ec);
  CHECK(redis.cli("hget " + name + " " + a.id() + ":7") == "1");
  REQUIRE_FALSE(call([&](auto cb) { spin.async_unlock(7, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK(call([&](auto cb) { spin.async_unlock(7, cb); }).ec == errc::not_owner);

  // The other way round: a reentrant holder keeps the spin lock out.
  REQUIRE(call<bool>([&](auto cb) { plain.async_try_lock(1, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { spin.async_try_lock(7, cb); }).value);
  REQUIRE_FALSE(call([&](auto cb) { plain.async_unlock(1, cb); }).ec);
  CHECK(call<bool>([&](auto cb) { spin.async_try_lock(7, cb); }).value);

  // Force unlock is a plain DEL.
  auto forced = call<bool>([&](auto cb) { spin.async_force_unlock(cb); });
  CHECK_FALSE(forced.ec);
  CHECK(forced.value);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK_FALSE(call<bool>([&](auto cb) { spin.async_force_unlock(cb); }).value);
}

TEST_CASE("spin lock: two clients contend and never overlap") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("spin-contend");
  std::atomic<int> inside{0};
  std::atomic<int> overlaps{0};
  std::atomic<int> errors{0};
  auto worker = [&](deadbolt::client& c, deadbolt::owner_id owner) {
    auto lock = c.spin_lock(name);
    for (int i = 0; i < 15; ++i) {
      if (call([&](auto cb) { lock.async_lock(owner, cb); }).ec) {
        ++errors;
        continue;
      }
      if (inside.fetch_add(1) != 0) ++overlaps;
      std::this_thread::sleep_for(2ms);
      inside.fetch_sub(1);
      if (call([&](auto cb) { lock.async_unlock(owner, cb); }).ec) ++errors;
    }
  };
  std::thread t1([&] { worker(a, 1); });
  std::thread t2([&] { worker(b, 1); });
  std::thread t3([&] { worker(a, 2); });
  t1.join();
  t2.join();
  t3.join();
  CHECK(errors == 0);
  CHECK(overlaps == 0);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("a spin unlock publishes nothing: a reentrant waiter wakes only at its TTL bound") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("spin-silent");
  auto spin = a.spin_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { spin.async_lock(1, 1500ms, cb); }).ec);

  // A reentrant waiter parks on the channel for at most the holder's TTL (~1.5 s).
  std::promise<std::error_code> got;
  b.lock(name).async_lock(2, [&](std::error_code ec) { got.set_value(ec); });
  std::this_thread::sleep_for(200ms);
  const auto unlocked = std::chrono::steady_clock::now();
  REQUIRE_FALSE(call([&](auto cb) { spin.async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
  auto f = got.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(f.get());
  // Woken by a message it would have tried at once; it waited out the TTL instead.
  CHECK(std::chrono::steady_clock::now() - unlocked >= 900ms);
  REQUIRE_FALSE(call([&](auto cb) { b.lock(name).async_unlock(2, cb); }).ec);

  // For comparison, a reentrant unlock wakes it at once.
  auto plain = a.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { plain.async_lock(1, 1500ms, cb); }).ec);
  std::promise<std::error_code> got2;
  b.lock(name).async_lock(2, [&](std::error_code ec) { got2.set_value(ec); });
  std::this_thread::sleep_for(200ms);
  const auto unlocked2 = std::chrono::steady_clock::now();
  REQUIRE_FALSE(call([&](auto cb) { plain.async_unlock(1, cb); }).ec);
  auto f2 = got2.get_future();
  REQUIRE(f2.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(f2.get());
  CHECK(std::chrono::steady_clock::now() - unlocked2 < 850ms);  // the spin lock above took >= 900 ms
  REQUIRE_FALSE(call([&](auto cb) { b.lock(name).async_unlock(2, cb); }).ec);
}

TEST_CASE("spin try_lock with a wait gives up after the wait, and gets a lock freed meanwhile") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("spin-wait");
  REQUIRE_FALSE(call([&](auto cb) { a.spin_lock(name).async_lock(1, cb); }).ec);

  for (auto backoff : {deadbolt::spin_backoff{}, deadbolt::spin_backoff::constant(64ms)}) {
    auto lb = b.spin_lock(name, backoff);
    const auto started = std::chrono::steady_clock::now();
    auto r = call<bool>([&](auto cb) { lb.async_try_lock(1, 300ms, 0ms, cb); });
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK_FALSE(r.ec);
    CHECK_FALSE(r.value);
    CHECK(took >= 290ms);
    CHECK(took < 1500ms);
  }

  // Released while b spins: b gets it within a backoff pause or so.
  std::promise<std::pair<std::error_code, bool>> got;
  b.spin_lock(name).async_try_lock(1, 10s, 0ms, [&](std::error_code ec, bool ok) { got.set_value({ec, ok}); });
  std::this_thread::sleep_for(300ms);
  const auto unlocked = std::chrono::steady_clock::now();
  REQUIRE_FALSE(call([&](auto cb) { a.spin_lock(name).async_unlock(1, cb); }).ec);
  auto f = got.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  const auto [ec, ok] = f.get();
  CHECK_FALSE(ec);
  CHECK(ok);
  CHECK(std::chrono::steady_clock::now() - unlocked < 1s);
  REQUIRE_FALSE(call([&](auto cb) { b.spin_lock(name).async_unlock(1, cb); }).ec);
}

TEST_CASE("cancelling a spinning lock ends it promptly with operation_aborted") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("spin-cancel");
  REQUIRE_FALSE(call([&](auto cb) { holder.spin_lock(name).async_lock(1, cb); }).ec);

  for (auto backoff : {deadbolt::spin_backoff{}, deadbolt::spin_backoff::constant(10s)}) {
    asio::cancellation_signal signal;
    std::promise<std::error_code> done;
    const auto started = std::chrono::steady_clock::now();
    auto lock = c.spin_lock(name, backoff);
    asio::post(io.io, [&] {
      lock.async_lock(2, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
    });
    std::this_thread::sleep_for(200ms);
    asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
    auto f = done.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    CHECK(f.get() == asio::error::operation_aborted);
    CHECK(std::chrono::steady_clock::now() - started < 2s);
  }
  // Nothing was taken by the cancelled waits.
  CHECK(redis.cli("hlen " + name) == "1");
  REQUIRE_FALSE(call([&](auto cb) { holder.spin_lock(name).async_unlock(1, cb); }).ec);
}
