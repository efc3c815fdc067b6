// The reentrant lock against a real redis-server: semantics, and the exact data Redisson expects.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <sstream>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/refused.hpp"
#include "support/sync.hpp"
#include "semaphore/pubsub.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::none;

using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("lock, reentry and unlock keep Redisson's hash layout") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("layout");
  auto lock = c.lock(name);
  const std::string field = c.id() + ":7";
  CHECK(c.id().size() == 36);

  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(7, cb); }).ec);
  CHECK(redis.cli("type " + name) == "hash");
  CHECK(redis.cli("hget " + name + " " + field) == "1");
  const int ttl = std::stoi(redis.cli("pttl " + name));
  CHECK(ttl > 25000);
  CHECK(ttl <= 30000);

  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(7, cb); }).ec);
  CHECK(redis.cli("hget " + name + " " + field) == "2");
  CHECK(call<std::int64_t>([&](auto cb) { lock.async_hold_count(7, cb); }).value == 2);
  CHECK(call<bool>([&](auto cb) { lock.async_is_held_by(7, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { lock.async_is_held_by(8, cb); }).value);

  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(7, cb); }).ec);
  CHECK(redis.cli("hget " + name + " " + field) == "1");
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(7, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK_FALSE(call<bool>([&](auto cb) { lock.async_is_locked(cb); }).value);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_remaining_ttl(cb); }).value.count() == -2);
}

TEST_CASE("two clients exclude each other") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("exclude");
  auto la = a.lock(name);
  auto lb = b.lock(name);

  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);
  auto no_wait = call<bool>([&](auto cb) { lb.async_try_lock(1, cb); });
  CHECK_FALSE(no_wait.ec);
  CHECK_FALSE(no_wait.value);

  const auto started = std::chrono::steady_clock::now();
  auto short_wait = call<bool>([&](auto cb) { lb.async_try_lock(1, 200ms, 0ms, cb); });
  CHECK_FALSE(short_wait.ec);
  CHECK_FALSE(short_wait.value);
  CHECK(std::chrono::steady_clock::now() - started >= 190ms);

  // Same owner id on another client is another owner.
  CHECK(call([&](auto cb) { lb.async_unlock(1, cb); }).ec == errc::not_owner);
  CHECK(redis.cli("hget " + name + " " + a.id() + ":1") == "1");

  REQUIRE_FALSE(call([&](auto cb) { la.async_unlock(1, cb); }).ec);
  auto after = call<bool>([&](auto cb) { lb.async_try_lock(1, cb); });
  CHECK(after.value);
  REQUIRE_FALSE(call([&](auto cb) { lb.async_unlock(1, cb); }).ec);
}

TEST_CASE("a given lease expires; the next waiter gets the lock after it") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("lease");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  REQUIRE(call<bool>([&](auto cb) { la.async_try_lock(1, 0ms, 300ms, cb); }).value);
  CHECK(std::stoi(redis.cli("pttl " + name)) <= 300);
  auto waited = call<bool>([&](auto cb) { lb.async_try_lock(2, 5s, 0ms, cb); });
  CHECK_FALSE(waited.ec);
  CHECK(waited.value);
  // The first holder's unlock now fails: its client found the lease lost at its deadline.
  CHECK(call([&](auto cb) { la.async_unlock(1, cb); }).ec == errc::lease_lost);
  REQUIRE_FALSE(call([&](auto cb) { lb.async_unlock(2, cb); }).ec);
}

TEST_CASE("a waiter wakes on the unlock message, long before the holder's TTL") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("wake");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);  // watchdog: 30 s TTL

  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    call([&](auto cb) { la.async_unlock(1, cb); });
  });
  const auto started = std::chrono::steady_clock::now();
  auto got = call<bool>([&](auto cb) { lb.async_try_lock(2, 20s, 0ms, cb); });
  const auto waited = std::chrono::steady_clock::now() - started;
  releaser.join();
  CHECK(got.value);
  CHECK(waited < 10s);  // woken by the message, not by the 30 s TTL
  REQUIRE_FALSE(call([&](auto cb) { lb.async_unlock(2, cb); }).ec);
}

TEST_CASE("force unlock deletes the lock and wakes a waiter") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("force");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);
  std::thread breaker([&] {
    std::this_thread::sleep_for(300ms);
    auto r = call<bool>([&](auto cb) { lb.async_force_unlock(cb); });
    CHECK(r.value);
  });
  const auto started = std::chrono::steady_clock::now();
  auto got = call<bool>([&](auto cb) { lb.async_try_lock(2, 20s, 0ms, cb); });
  breaker.join();
  CHECK(got.value);
  CHECK(std::chrono::steady_clock::now() - started < 10s);
  CHECK_FALSE(call<bool>([&](auto cb) { lb.async_force_unlock(cb); }).ec);
  CHECK_FALSE(call<bool>([&](auto cb) { lb.async_force_unlock(cb); }).value);  // nothing left to delete
}

TEST_CASE("the watchdog keeps a lock well past its lease, and stops after unlock") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 300ms;
  deadbolt::client c(io.executor(), cfg);
  const std::string name = unique_name("watchdog");
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);
  std::this_thread::sleep_for(1200ms);  // four leases
  CHECK(call<bool>([&](auto cb) { lock.async_is_held_by(1, cb); }).value);
  CHECK(std::stoi(redis.cli("pttl " + name)) > 0);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("the lease-lost handler hears when the lock is taken away") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 300ms;
  deadbolt::client c(io.executor(), cfg);
  std::promise<std::string> lost;
  c.on_lease_lost([&lost](std::string_view lock_name, std::int64_t owner) {
    lost.set_value(std::string(lock_name) + "/" + std::to_string(owner));
  });
  const std::string name = unique_name("lost");
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(3, cb); }).ec);
  redis.cli("del " + name);
  auto f = lost.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == name + "/3");
  CHECK(call<bool>([&](auto cb) { lock.async_lease_lost(3, cb); }).value);
  CHECK(call([&](auto cb) { lock.async_unlock(3, cb); }).ec == errc::lease_lost);
}

TEST_CASE("a full waiter table is an error, not a wait") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  cfg.max_waiters = 1;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), cfg);
  const std::string name = unique_name("full");
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(name).async_lock(1, cb); }).ec);
  auto lock = c.lock(name);
  std::promise<std::error_code> first;
  lock.async_try_lock(1, 3s, 0ms, [&](std::error_code ec, bool) { first.set_value(ec); });
  std::this_thread::sleep_for(200ms);  // the first waiter is parked
  auto second = call<bool>([&](auto cb) { lock.async_try_lock(2, 3s, 0ms, cb); });
  CHECK(second.ec == errc::waiter_table_full);
  CHECK_FALSE(first.get_future().get());
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(name).async_unlock(1, cb); }).ec);
}

TEST_CASE("a waiter re-checking after a wake-up keeps its place in a full waiter table") {
  // The first waiter (lock x) is woken (its subscriber connection is killed and made again) and
  // re-checks while a second attempt (lock y: nobody contends there, so it is sent) is answered
  // "busy": the second must not take the first one's place, or the first one's next wait finds the
  // table full and its lock fails though it came first.
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = config_for(redis);
  cfg.max_waiters = 1;
  cfg.client_name = unique_name("full-recheck-client");  // to find its subscriber connection
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), cfg);
  const std::string x = unique_name("full-recheck-x"), y = unique_name("full-recheck-y");
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(x).async_lock(1, cb); }).ec);
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(y).async_lock(1, cb); }).ec);
  std::promise<std::error_code> first, second;
  c.lock(x).async_try_lock(1, 6s, 0ms, [&](std::error_code ec, bool) { first.set_value(ec); });
  REQUIRE(deadbolt::test::subscribers_reach(redis, "redisson_lock__channel:{" + x + "}", 1));
  // Scripts wait while writes are paused, so both attempts below are answered in the order sent,
  // after the pause: the second's first, while the first waiter is away re-checking.
  // Its subscriber connection: the server is shared with other tests, whose connections stay.
  std::string subscriber_id;
  std::istringstream list(redis.cli("client list"));
  for (std::string line; std::getline(list, line);) {
    if (line.find(" name=" + cfg.client_name + " ") == std::string::npos) continue;
    if (line.compare(0, 3, "id=") != 0 || line.find(" sub=1 ") == std::string::npos) continue;
    subscriber_id = line.substr(3, line.find(' ') - 3);
  }
  REQUIRE_FALSE(subscriber_id.empty());
  REQUIRE(redis.cli("client pause 1500 write") == "OK");
  c.lock(y).async_try_lock(2, 6s, 0ms, [&](std::error_code ec, bool) { second.set_value(ec); });
  std::this_thread::sleep_for(100ms);  // the second attempt is sent
  CHECK(redis.cli("client kill id " + subscriber_id) == "1");  // the first waiter wakes, re-checks
  auto second_done = second.get_future();
  const bool refused = second_done.wait_for(4s) == std::future_status::ready;
  CHECK(refused);  // else it took the first waiter's place, and waits
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(x).async_unlock(1, cb); }).ec);
  CHECK(first.get_future().get() == std::error_code());  // woken by the unlock: it holds x
  CHECK(redis.cli("hexists '" + x + "' '" + c.id() + ":1'") == "1");
  REQUIRE_FALSE(call([&](auto cb) { holder.lock(y).async_unlock(1, cb); }).ec);
  CHECK(second_done.get() == errc::waiter_table_full);
}

TEST_CASE("a key of the wrong type is a clear error") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("wrongtype");
  redis.cli("set " + name + " plain-string");
  CHECK(call<bool>([&](auto cb) { c.lock(name).async_try_lock(1, cb); }).ec == errc::wrong_type);
  CHECK(call<bool>([&](auto cb) { c.lock(name).async_try_lock(1, 0ms, 0ms, cb); }).ec == errc::wrong_type);
}

// The unlock reads the hold count (HGET) and deletes a last hold without counting it down; any other
// count is left to HINCRBY, which judges it as before.
TEST_CASE("an unlock judges the count the server holds: 1 releases, more counts down, garbage is an error") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("counted");
  const std::string field = c.id() + ":1";
  auto lock = c.lock(name);

  redis.cli("hset " + name + " " + field + " 3");
  REQUIRE(redis.cli("pexpire " + name + " 60000") == "1");
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);  // not the client's own hold: not judged
  CHECK(redis.cli("hget " + name + " " + field) == "2");

  redis.cli("hset " + name + " " + field + " 1");
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");

  redis.cli("hset " + name + " " + field + " many");
  const std::string latches = "keys redisson_unlock_latch:{" + name + "}:*";
  const std::string latched_before = redis.cli(latches);  // the first unlock's (a 0 stays latched)
  CHECK(call([&](auto cb) { lock.async_unlock(1, cb); }).ec == errc::server_error);
  CHECK(redis.cli("hget " + name + " " + field) == "many");  // left as it was
  CHECK(redis.cli(latches) == latched_before);                // and nothing latched

  redis.cli("hset " + name + " " + field + " 0");
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);  // counted down below 1: gone
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("scripts survive SCRIPT FLUSH (NOSCRIPT falls back to EVAL)") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("noscript");
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);
  REQUIRE(redis.cli("script flush") == "OK");
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("an unreachable server fails operations with the reason, not a hang") {
  deadbolt::test::io_thread io;
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:1";
  cfg.command_timeout = 500ms;
  deadbolt::client c(io.executor(), cfg);
  auto r = call<bool>([&](auto cb) { c.lock("x").async_try_lock(1, cb); });
  CHECK(deadbolt::test::is_refused(r.ec));  // asio::error::connection_refused but under qemu-mips (support/refused.hpp)
}

TEST_CASE("a bad configuration is reported by every operation") {
  deadbolt::test::io_thread io;
  deadbolt::config cfg;
  cfg.url = "http://example";
  deadbolt::client c(io.executor(), cfg);
  CHECK(c.config_error() == errc::invalid_url);
  CHECK(call([&](auto cb) { c.async_connect(cb); }).ec == errc::invalid_url);
}

TEST_CASE("async_command returns whole replies, errors with their text") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("command");
  REQUIRE_FALSE(call([&](auto cb) { c.lock(name).async_lock(4, cb); }).ec);
  auto all = call<deadbolt::reply>([&](auto cb) { c.async_command({"HGETALL", name}, cb); });
  REQUIRE_FALSE(all.ec);
  REQUIRE(all.value.elements.size() == 2);  // RESP3 map: field, count
  CHECK(all.value.elements[0].text == c.id() + ":4");
  CHECK(all.value.elements[1].as_int() == 1);
  auto bad = call<deadbolt::reply>([&](auto cb) { c.async_command({"HGETALL"}, cb); });
  CHECK(bad.ec == errc::server_error);
  CHECK(bad.value.is_error());
  CHECK(bad.value.text.find("wrong number of arguments") != std::string::npos);
  REQUIRE_FALSE(call([&](auto cb) { c.lock(name).async_unlock(4, cb); }).ec);
}
