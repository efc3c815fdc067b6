// The read/write lock (Redisson RReadWriteLock, docs/protocol.md §4) against a real redis-server: the
// hash's mode and fields, per-hold timeout keys, readers sharing, writers excluding, the downgrade,
// wake-ups by the "0"/"1" messages, renewal of our own read holds, and the blocking API.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("read/write lock: readers share, keep Redisson's layout, and exclude writers") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("rw-readers");
  auto ra = a.read_write_lock(name);
  auto rb = b.read_write_lock(name);

  REQUIRE_FALSE(call([&](auto cb) { ra.read().async_lock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { ra.read().async_lock(1, cb); }).ec);
  REQUIRE(call<bool>([&](auto cb) { rb.read().async_try_lock(2, cb); }).value);
  CHECK(redis.cli("hget " + name + " mode") == "read");
  CHECK(redis.cli("hget " + name + " " + a.id() + ":1") == "2");
  CHECK(redis.cli("hget " + name + " " + b.id() + ":2") == "1");
  const std::string prefix = "{" + name + "}:" + a.id() + ":1:rwlock_timeout:";
  CHECK(std::stoi(redis.cli("pttl " + prefix + "1")) > 25000);
  CHECK(std::stoi(redis.cli("pttl " + prefix + "2")) > 25000);
  CHECK(call<bool>([&](auto cb) { ra.read().async_is_locked(cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { ra.write().async_is_locked(cb); }).value);

  // No writer while readers hold, not even one of the readers (no upgrade).
  CHECK_FALSE(call<bool>([&](auto cb) { rb.write().async_try_lock(3, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { ra.write().async_try_lock(1, cb); }).value);

  REQUIRE_FALSE(call([&](auto cb) { ra.read().async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + prefix + "2") == "0");
  REQUIRE_FALSE(call([&](auto cb) { ra.read().async_unlock(1, cb); }).ec);
  CHECK(call([&](auto cb) { ra.read().async_unlock(1, cb); }).ec == errc::not_owner);
  CHECK(redis.cli("hget " + name + " mode") == "read");  // b still reads
  CHECK(call([&](auto cb) { ra.write().async_unlock(1, cb); }).ec == errc::not_owner);
  REQUIRE_FALSE(call([&](auto cb) { rb.read().async_unlock(2, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK(call<bool>([&](auto cb) { rb.write().async_try_lock(3, cb); }).value);
  CHECK(redis.cli("hget " + name + " mode") == "write");
  CHECK(redis.cli("hget " + name + " " + b.id() + ":3:write") == "1");
  CHECK_FALSE(call<bool>([&](auto cb) { ra.read().async_try_lock(1, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { ra.read().async_force_unlock(cb); }).value);  // not in read mode
  CHECK(call<bool>([&](auto cb) { ra.write().async_force_unlock(cb); }).value);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("read/write lock: the writer may read, and releasing the write downgrades it") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("rw-downgrade");
  auto ra = a.read_write_lock(name);
  auto rb = b.read_write_lock(name);

  REQUIRE_FALSE(call([&](auto cb) { ra.write().async_lock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { ra.write().async_lock(1, cb); }).ec);  // reentrant
  CHECK(redis.cli("hget " + name + " " + a.id() + ":1:write") == "2");
  REQUIRE(call<bool>([&](auto cb) { ra.read().async_try_lock(1, cb); }).value);
  CHECK(call<bool>([&](auto cb) { ra.read().async_is_locked(cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { rb.read().async_try_lock(2, cb); }).value);
  REQUIRE_FALSE(call([&](auto cb) { ra.write().async_unlock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { ra.write().async_unlock(1, cb); }).ec);
  CHECK(redis.cli("hget " + name + " mode") == "read");
  CHECK(redis.cli("hexists " + name + " " + a.id() + ":1:write") == "0");
  CHECK(call<bool>([&](auto cb) { rb.read().async_try_lock(2, cb); }).value);  // readers share again
  CHECK_FALSE(call<bool>([&](auto cb) { rb.write().async_try_lock(3, cb); }).value);
  REQUIRE_FALSE(call([&](auto cb) { ra.read().async_unlock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { rb.read().async_unlock(2, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("read/write lock: a write unlock wakes every waiting reader; the last read unlock wakes a writer") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("rw-wake");
  auto writer = a.read_write_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { writer.write().async_lock(1, cb); }).ec);

  // The writer's lease is 30 s and the readers wait 10 s: only the message can let them in.
  std::vector<std::promise<bool>> readers(3);
  auto rb = b.read_write_lock(name);
  for (int i = 0; i < 3; ++i) {
    rb.read().async_try_lock(10 + i, 10s, 0ms, [&, i](std::error_code ec, bool ok) { readers[i].set_value(!ec && ok); });
  }
  std::this_thread::sleep_for(200ms);  // let them park (a late one simply finds the lock free)
  REQUIRE_FALSE(call([&](auto cb) { writer.write().async_unlock(1, cb); }).ec);
  for (auto& r : readers) {
    auto f = r.get_future();
    REQUIRE(f.wait_for(15s) == std::future_status::ready);
    CHECK(f.get());
  }
  CHECK(redis.cli("hlen " + name) == "4");  // mode + three readers

  std::promise<bool> wrote;
  writer.write().async_try_lock(2, 10s, 0ms, [&](std::error_code ec, bool ok) { wrote.set_value(!ec && ok); });
  std::this_thread::sleep_for(200ms);
  for (int i = 0; i < 3; ++i) REQUIRE_FALSE(call([&](auto cb) { rb.read().async_unlock(10 + i, cb); }).ec);
  auto f = wrote.get_future();
  REQUIRE(f.wait_for(15s) == std::future_status::ready);
  CHECK(f.get());
  REQUIRE_FALSE(call([&](auto cb) { writer.write().async_unlock(2, cb); }).ec);
}

TEST_CASE("read/write lock: the watchdog renews our read holds, and hears when one is lost") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  // Renewed every 300 ms. Not shorter: a hold whose renewal comes back later than its deadline (the
  // lease less its margin after the last confirmed send) is lost, which a busy CI machine can make
  // happen to a 300 ms lease (it did, on the server matrix's run).
  cfg.watchdog_timeout = 900ms;
  deadbolt::client c(io.executor(), cfg);
  std::promise<std::string> lost;
  c.on_lease_lost([&lost](std::string_view lock_name, std::int64_t owner) {
    lost.set_value(std::string(lock_name) + "/" + std::to_string(owner));
  });
  const std::string name = unique_name("rw-renew");
  auto rw = c.read_write_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_lock(1, cb); }).ec);
  std::this_thread::sleep_for(1200ms);  // more than a lease: only the renewals keep it
  const std::string key = "{" + name + "}:" + c.id() + ":1:rwlock_timeout:1";
  CHECK(std::stoi(redis.cli("pttl " + key)) > 0);
  CHECK(call<bool>([&](auto cb) { rw.read().async_is_held_by(1, cb); }).value);

  redis.cli("hdel " + name + " " + c.id() + ":1");
  auto f = lost.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == name + "/1");
  CHECK(call<bool>([&](auto cb) { rw.read().async_lease_lost(1, cb); }).value);
}

TEST_CASE("read/write lock: blocking, with std::shared_lock and std::unique_lock") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client a(config_for(redis));
  deadbolt::blocking_client b(config_for(redis));
  const std::string name = unique_name("rw-blocking");
  auto rwa = a.read_write_lock(name);
  auto rwb = b.read_write_lock(name);
  std::atomic<int> readers{0};
  std::atomic<int> writers{0};
  std::atomic<int> violations{0};
  auto reader = [&](deadbolt::blocking_read_write_lock& rw) {
    for (int i = 0; i < 5; ++i) {
      std::shared_lock<deadbolt::blocking_read_write_lock> guard(rw);
      ++readers;
      if (writers.load() != 0) ++violations;
      std::this_thread::sleep_for(3ms);
      --readers;
    }
  };
  auto writer = [&](deadbolt::blocking_read_write_lock& rw) {
    for (int i = 0; i < 5; ++i) {
      std::unique_lock<deadbolt::blocking_read_write_lock> guard(rw);
      if (writers.fetch_add(1) != 0 || readers.load() != 0) ++violations;
      std::this_thread::sleep_for(3ms);
      --writers;
    }
  };
  std::thread t1([&] { reader(rwa); });
  std::thread t2([&] { reader(rwb); });
  std::thread t3([&] { writer(rwa); });
  std::thread t4([&] { writer(rwb); });
  t1.join();
  t2.join();
  t3.join();
  t4.join();
  CHECK(violations.load() == 0);
  CHECK(redis.cli("exists " + name) == "0");

  std::shared_lock<deadbolt::blocking_read_write_lock> shared(rwa);
  std::unique_lock<deadbolt::blocking_read_write_lock> exclusive(rwb, std::defer_lock);
  CHECK_FALSE(exclusive.try_lock_for(100ms));
  std::shared_lock<deadbolt::blocking_read_write_lock> other(rwb, std::try_to_lock);
  CHECK(other.owns_lock());
}
