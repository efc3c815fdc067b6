// inspect(name) against a real redis-server: every kind the library writes, free and held, and keys
// of other types, through the async client and the blocking one.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <system_error>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/hooks.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::object_info;
using deadbolt::object_kind;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

namespace {

object_info inspect(deadbolt::client& c, const std::string& name) {
  auto r = call<object_info>([&](auto cb) { c.async_inspect(name, cb); });
  REQUIRE_MESSAGE(!r.ec, r.ec.message());
  return r.value;
}

std::string kind_of(const object_info& info) { return deadbolt::to_string(info.kind); }

}  // namespace

TEST_CASE("inspect: a name nothing is stored under") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const object_info info = inspect(c, unique_name("inspect-free"));
  CHECK(kind_of(info) == "none");
  CHECK(info.redis_type == "none");
  CHECK(info.ttl == -2ms);
  CHECK_FALSE(info.locked());
  CHECK(info.holders.empty());
  CHECK_FALSE(info.fencing_token);
  CHECK_FALSE(info.value);
  CHECK_FALSE(info.truncated);
}

TEST_CASE("inspect: a reentrant lock, held twice, then free") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("inspect-lock");
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(7, 20s, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(7, 20s, cb); }).ec);

  object_info info = inspect(c, name);
  CHECK(kind_of(info) == "lock");
  CHECK(info.redis_type == "hash");
  CHECK(info.locked());
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == c.id() + ":7");
  CHECK(info.holders[0].count == 2);
  CHECK_FALSE(info.holders[0].is_writer());
  CHECK(info.ttl > 0ms);
  CHECK(info.ttl <= 20s);
  CHECK(info.mode.empty());
  CHECK(info.queue.empty());
  CHECK_FALSE(info.fencing_token);

  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(7, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(7, cb); }).ec);
  info = inspect(c, name);
  CHECK(kind_of(info) == "none");
  CHECK_FALSE(info.locked());
}

TEST_CASE("inspect: a fenced lock shows its token, held or free") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("inspect-fenced");
  auto lock = c.fenced_lock(name);
  auto token = call<std::uint64_t>([&](auto cb) { lock.async_lock(3, cb); });
  REQUIRE_FALSE(token.ec);

  object_info info = inspect(c, name);
  CHECK(kind_of(info) == "fenced_lock");
  REQUIRE(info.fencing_token);
  CHECK(*info.fencing_token == token.value);
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == c.id() + ":3");
  CHECK(info.ttl > 0ms);  // the watchdog's lease

  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(3, cb); }).ec);
  info = inspect(c, name);
  CHECK(kind_of(info) == "fenced_lock");
  CHECK(info.redis_type == "none");
  CHECK_FALSE(info.locked());
  REQUIRE(info.fencing_token);
  CHECK(*info.fencing_token == token.value);
}

TEST_CASE("inspect: a fair lock with a waiter queued, and its deadline") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  // A braced name: every key comes from Redisson's naming rule without added braces.
  const std::string name = "{" + unique_name("inspect-fair") + "}:lock";
  auto held = a.fair_lock(name);
  auto waiting = b.fair_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { held.async_lock(1, cb); }).ec);

  std::promise<bool> got;
  waiting.async_try_lock(2, 10s, 0ms, [&](std::error_code ec, bool ok) { got.set_value(!ec && ok); });
  object_info info;
  REQUIRE(deadbolt::test::eventually([&] { return !(info = inspect(a, name)).queue.empty(); }, 5s));
  CHECK(kind_of(info) == "fair_lock");
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == a.id() + ":1");
  REQUIRE(info.queue.size() == 1);
  CHECK(info.queue[0].owner == b.id() + ":2");
  REQUIRE(info.queue[0].deadline_ms);
  const std::int64_t now = deadbolt::port::wall_clock_ms();
  CHECK(*info.queue[0].deadline_ms > now);
  CHECK(*info.queue[0].deadline_ms <= now + 10'000 + 30'000 + 1'000);  // its wait plus the holder's TTL

  REQUIRE_FALSE(call([&](auto cb) { held.async_unlock(1, cb); }).ec);
  auto fut = got.get_future();
  REQUIRE(fut.wait_for(10s) == std::future_status::ready);
  CHECK(fut.get());
  // Granted: the queue and its deadlines are gone, and a fair lock nobody waits for has a plain
  // lock's data.
  info = inspect(a, name);
  CHECK(kind_of(info) == "lock");
  CHECK(info.queue.empty());
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == b.id() + ":2");
  REQUIRE_FALSE(call([&](auto cb) { waiting.async_unlock(2, cb); }).ec);
}

TEST_CASE("inspect: a read/write lock, its readers with counts, then its writer") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("inspect-rw");
  auto rw = c.read_write_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_lock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_lock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_lock(2, cb); }).ec);

  object_info info = inspect(c, name);
  CHECK(kind_of(info) == "read_write_lock");
  CHECK(info.mode == "read");
  REQUIRE(info.holders.size() == 2);
  for (const auto& h : info.holders) {
    CHECK_FALSE(h.is_writer());
    if (h.owner == c.id() + ":1") CHECK(h.count == 2);
    else CHECK((h.owner == c.id() + ":2" && h.count == 1));
  }
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_unlock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_unlock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { rw.read().async_unlock(2, cb); }).ec);

  REQUIRE_FALSE(call([&](auto cb) { rw.write().async_lock(3, cb); }).ec);
  info = inspect(c, name);
  CHECK(kind_of(info) == "read_write_lock");
  CHECK(info.mode == "write");
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == c.id() + ":3:write");
  CHECK(info.holders[0].is_writer());
  CHECK(info.holders[0].count == 1);
  REQUIRE_FALSE(call([&](auto cb) { rw.write().async_unlock(3, cb); }).ec);
}

TEST_CASE("inspect: a semaphore and a latch are numbers the data cannot tell apart") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string sem_name = unique_name("inspect-sem");
  auto sem = c.semaphore(sem_name);
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(3, cb); }).value);
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_acquire(1, cb); }).value);
  object_info info = inspect(c, sem_name);
  CHECK(kind_of(info) == "semaphore_or_latch");
  CHECK(info.redis_type == "string");
  REQUIRE(info.value);
  CHECK(*info.value == 2);
  CHECK(info.ttl == -1ms);
  CHECK_FALSE(info.locked());

  const std::string latch_name = unique_name("inspect-latch");
  auto latch = c.count_down_latch(latch_name);
  REQUIRE(call<bool>([&](auto cb) { latch.async_try_set_count(4, cb); }).value);
  REQUIRE_FALSE(call<std::int64_t>([&](auto cb) { latch.async_count_down(cb); }).ec);
  info = inspect(c, latch_name);
  CHECK(kind_of(info) == "semaphore_or_latch");
  REQUIRE(info.value);
  CHECK(*info.value == 3);
}

TEST_CASE("inspect: a permit-expirable semaphore lists its permits with their expiry") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("inspect-permits");
  auto sem = c.expirable_semaphore(name);
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(3, cb); }).value);
  const std::int64_t before = deadbolt::port::wall_clock_ms();
  auto leased = call<deadbolt::permit_id>([&](auto cb) { sem.async_acquire(10s, cb); });
  auto forever = call<deadbolt::permit_id>([&](auto cb) { sem.async_acquire(0ms, cb); });
  REQUIRE_FALSE(leased.ec);
  REQUIRE_FALSE(forever.ec);

  const object_info info = inspect(c, name);
  CHECK(kind_of(info) == "expirable_semaphore");
  REQUIRE(info.value);
  CHECK(*info.value == 1);
  REQUIRE(info.permits.size() == 2);
  CHECK(info.permit_count == 2);
  bool saw_leased = false, saw_forever = false;
  for (const auto& p : info.permits) {
    if (p.id == leased.value) {
      saw_leased = true;
      REQUIRE(p.expires_ms);
      CHECK(*p.expires_ms >= before + 10'000);
      CHECK(*p.expires_ms <= deadbolt::port::wall_clock_ms() + 10'000);
    } else if (p.id == forever.value) {
      saw_forever = true;
      CHECK_FALSE(p.expires_ms);
    }
  }
  CHECK(saw_leased);
  CHECK(saw_forever);
  CHECK(info.holders.empty());
}

TEST_CASE("inspect: keys that are not locks, semaphores or latches are 'other' and left alone") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));

  const std::string hash = unique_name("inspect-user");
  redis.cli("hset " + hash + " name alice");
  object_info info = inspect(c, hash);
  CHECK(kind_of(info) == "other");
  CHECK(info.redis_type == "hash");
  CHECK(info.foreign_field == "name");
  CHECK(info.holders.empty());
  CHECK_FALSE(info.locked());
  CHECK(redis.cli("hget " + hash + " name") == "alice");

  // Owner-shaped fields with a value that is not a count: still not a lock.
  const std::string odd = unique_name("inspect-odd");
  redis.cli("hset " + odd + " 6e3814a1-e847-452b-a982-45baf93a1df2:1 yes");
  info = inspect(c, odd);
  CHECK(kind_of(info) == "other");
  CHECK(info.foreign_field == "6e3814a1-e847-452b-a982-45baf93a1df2:1");

  const std::string list = unique_name("inspect-list");
  redis.cli("rpush " + list + " x");
  info = inspect(c, list);
  CHECK(kind_of(info) == "other");
  CHECK(info.redis_type == "list");

  const std::string text = unique_name("inspect-text");
  redis.cli("set " + text + " hello");
  info = inspect(c, text);
  CHECK(kind_of(info) == "other");
  CHECK(info.redis_type == "string");
  CHECK_FALSE(info.value);

  // An auxiliary key of a foreign type (a queue name holding a string) reads as empty, no error.
  const std::string lock_name = unique_name("inspect-foreign-queue");
  redis.cli("set redisson_lock_queue:{" + lock_name + "} x");
  info = inspect(c, lock_name);
  CHECK(kind_of(info) == "none");
  CHECK(info.queue.empty());
}

TEST_CASE("inspect: a hash too big for one reply is listed in part, not refused") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("inspect-big");
  // 3000 fields: 6000 elements, more than the default reply limit (4096) if all were sent.
  redis.cli("eval \"for i = 1, 3000 do redis.call('hset', KEYS[1], 'f' .. i, i) end\" 1 " + name);
  const object_info info = inspect(c, name);
  CHECK(kind_of(info) == "other");
  CHECK(info.truncated);
  CHECK_FALSE(info.foreign_field.empty());
}

TEST_CASE("inspect: the blocking client, both forms") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client c(config_for(redis));
  const std::string name = unique_name("inspect-blocking");
  auto lock = c.lock(name);
  lock.lock();
  std::error_code ec;
  const object_info info = c.inspect(name, ec);
  REQUIRE_FALSE(ec);
  CHECK(kind_of(info) == "lock");
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == c.id() + ":" + std::to_string(deadbolt::port::thread_id()));
  lock.unlock();
  CHECK(kind_of(c.inspect(name)) == "none");

  deadbolt::config bad = config_for(redis);
  bad.url = "nonsense://";
  deadbolt::blocking_client broken(bad);
  CHECK(broken.inspect(name, ec).kind == object_kind::none);
  CHECK(ec == deadbolt::errc::invalid_url);
#if defined(__cpp_exceptions)
  CHECK_THROWS_AS(broken.inspect(name), std::system_error);
#endif
}
