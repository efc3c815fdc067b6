// Regressions of the hold accounting against a real redis-server (its own fixture: these tests pause
// it and cut connections): a hold ends when its owner releases it or its lease ends, never later and
// never sooner, whatever replies were lost on the way.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "scripts.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"
#include "support/tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::unique_name;
using clock_type = std::chrono::steady_clock;
using deadbolt::test::eventually;

namespace {

deadbolt::config fast_config(const std::string& url, std::chrono::milliseconds watchdog = 1500ms) {
  deadbolt::config cfg;
  cfg.url = url;
  cfg.watchdog_timeout = watchdog;
  cfg.command_timeout = 300ms;
  cfg.connect_timeout = 1000ms;
  cfg.reconnect_min = 10ms;
  cfg.reconnect_max = 50ms;
  return cfg;
}

/// Counts the client's lease-lost calls (they arrive on its loop thread).
struct lost_counter {
  std::shared_ptr<std::atomic<int>> n = std::make_shared<std::atomic<int>>(0);
  deadbolt::detail::lease_lost_handler handler() {
    return [n = n](std::string_view, std::int64_t) { ++*n; };
  }
};

bool try_lock(deadbolt::reentrant_lock& lock, std::int64_t owner, std::chrono::milliseconds wait,
              std::chrono::milliseconds lease, std::error_code* ec = nullptr) {
  const auto r = call<bool>([&](auto cb) { lock.async_try_lock(owner, wait, lease, cb); });
  if (ec != nullptr) *ec = r.ec;
  return r.value;
}

std::error_code unlock(deadbolt::reentrant_lock& lock, std::int64_t owner) {
  return call([&](auto cb) { lock.async_unlock(owner, cb); }).ec;
}

}  // namespace

TEST_CASE("an unlock that fails stops the renewals: the lock ends with its lease") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(redis.url()));
  const std::string name = unique_name("failed-unlock");
  auto lock = c.lock(name);
  REQUIRE(try_lock(lock, 7, 0ms, 0ms));  // watchdog: 1.5 s lease, renewed every 500 ms
  // Writes wait past command_timeout and every retry; the timed-out connections take their
  // requests with them.
  REQUIRE(redis.cli("client pause 1200 write") == "OK");
  const std::error_code ec = unlock(lock, 7);
  CHECK(ec);
  // Once the pause is over nothing renews it: gone within its lease (1.5 s) plus margin.
  CHECK(eventually([&] { return redis.cli("exists " + name) == "0"; }, 4000ms));
}

TEST_CASE("fixed-lease holds that ran out leave the held-lock table") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = fast_config(redis.url());
  cfg.max_held_locks = 8;
  deadbolt::client c(io.executor(), cfg);
  const std::string base = unique_name("expired");
  for (int i = 0; i < 8; ++i) {
    auto lock = c.lock(base + "-a" + std::to_string(i));
    REQUIRE(try_lock(lock, 1, 0ms, 200ms));
  }
  auto ninth = c.lock(base + "-live");
  std::error_code ec;
  CHECK_FALSE(try_lock(ninth, 1, 0ms, 200ms, &ec));  // eight live holds: full
  CHECK(ec == errc::held_table_full);
  std::this_thread::sleep_for(300ms);  // every lease has ended
  for (int i = 0; i < 8; ++i) {
    auto lock = c.lock(base + "-b" + std::to_string(i));
    CHECK(try_lock(lock, 1, 0ms, 200ms, &ec));
    CHECK_FALSE(ec);
  }
}

TEST_CASE("an ambiguous acquire after a fixed lease ran out is not run twice") {
  deadbolt::test::redis_server redis;
  deadbolt::test::tcp_proxy proxy(redis.port());
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(proxy.url()));
  const std::string name = unique_name("stale-verify");
  auto lock = c.lock(name);
  const std::string field = c.id() + ":7";
  REQUIRE(try_lock(lock, 7, 0ms, 200ms));
  std::this_thread::sleep_for(300ms);  // expired; the table still remembered a hold
  REQUIRE(redis.cli("exists " + name) == "0");
  proxy.cut_after("EVALSHA");  // the acquire runs, its reply is lost
  REQUIRE(try_lock(lock, 7, 5s, 0ms));
  CHECK(proxy.cuts() == 1);
  CHECK(redis.cli("hget " + name + " " + field) == "1");
  CHECK_FALSE(unlock(lock, 7));
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("a lease declared lost that was not: a re-acquire and one unlock free the lock") {
  deadbolt::test::redis_server redis;
  deadbolt::test::tcp_proxy proxy(redis.port());
  deadbolt::test::io_thread io;
  auto cfg = fast_config(proxy.url(), 1500ms);
  cfg.command_timeout = 10s;  // the replies are late, not the connection
  deadbolt::client c(io.executor(), cfg);
  lost_counter lost;
  c.on_lease_lost(lost.handler());
  const std::string name = unique_name("not-lost");
  auto lock = c.lock(name);
  REQUIRE(try_lock(lock, 7, 0ms, 0ms));
  std::this_thread::sleep_for(700ms);  // one renewal went through: the server has its script
  proxy.mute(true);  // renewals run on the server; their replies never arrive
  REQUIRE(eventually([&] { return lost.n->load() == 1; }, 5000ms));
  proxy.mute(false);
  proxy.drop_links();  // a fresh connection for what follows
  std::this_thread::sleep_for(200ms);  // the client saw its connection close
  REQUIRE(redis.cli("exists " + name) == "1");  // it was renewed all along
  REQUIRE(try_lock(lock, 7, 5s, 0ms));
  CHECK_FALSE(unlock(lock, 7));
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("an acquire whose outcome stayed unknown is resolved before the table is trusted") {
  deadbolt::test::redis_server redis;
  deadbolt::test::tcp_proxy proxy(redis.port());
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(proxy.url()));
  const std::string name = unique_name("unknown");
  auto lock = c.lock(name);
  const std::string field = c.id() + ":7";
  proxy.cut_after("EVALSHA");  // the acquire runs, its reply is lost...
  proxy.cut_after("HGET");     // ...and so is the check's
  std::error_code ec;
  CHECK_FALSE(try_lock(lock, 7, 0ms, 0ms, &ec));
  CHECK(ec == errc::outcome_unknown);
  REQUIRE(redis.cli("hget " + name + " " + field) == "1");
  REQUIRE(try_lock(lock, 7, 5s, 0ms));  // re-enters on the server: 2 there, 1 for the caller
  CHECK(redis.cli("hget " + name + " " + field) == "2");
  CHECK_FALSE(unlock(lock, 7));  // the caller's only hold: the unknown one goes with it
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("re-entering a watchdog hold with a short lease keeps the watchdog's lease") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), fast_config(redis.url(), 3000ms));
  deadbolt::client b(io.executor(), fast_config(redis.url(), 3000ms));
  const std::string name = unique_name("reenter-short");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  REQUIRE(try_lock(la, 1, 0ms, 0ms));
  REQUIRE(try_lock(la, 1, 0ms, 200ms));
  CHECK(std::stoll(redis.cli("pttl " + name)) > 1000);
  CHECK_FALSE(unlock(la, 1));  // one hold left, still under the watchdog
  CHECK(std::stoll(redis.cli("pttl " + name)) > 1000);
  CHECK_FALSE(try_lock(lb, 2, 600ms, 0ms));  // well past the re-entry's 200 ms
  CHECK_FALSE(unlock(la, 1));
  CHECK(try_lock(lb, 2, 0ms, 0ms));
  CHECK_FALSE(unlock(lb, 2));
}

TEST_CASE("every kind reports a lost lease at unlock") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(redis.url(), 450ms));
  lost_counter lost;
  c.on_lease_lost(lost.handler());
  const std::string name = unique_name("lost-unlock");
  SUBCASE("fair") {
    auto lock = c.fair_lock(name);
    REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(3, 0ms, 0ms, cb); }).value);
    REQUIRE(redis.cli("del " + name) == "1");
    REQUIRE(eventually([&] { return lost.n->load() == 1; }, 3000ms));
    CHECK(call([&](auto cb) { lock.async_unlock(3, cb); }).ec == errc::lease_lost);
  }
  SUBCASE("reentrant") {
    auto lock = c.lock(name);
    REQUIRE(try_lock(lock, 3, 0ms, 0ms));
    REQUIRE(redis.cli("del " + name) == "1");
    REQUIRE(eventually([&] { return lost.n->load() == 1; }, 3000ms));
    CHECK(unlock(lock, 3) == errc::lease_lost);
  }
}

TEST_CASE("a lease the server would reject is refused before anything is written") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), fast_config(redis.url()));
  const std::string name = unique_name("huge-lease");
  auto lock = c.lock(name);
  std::error_code ec;
  CHECK_FALSE(try_lock(lock, 1, 0ms, std::chrono::milliseconds::max(), &ec));
  CHECK(ec == errc::invalid_argument);
  CHECK(redis.cli("exists " + name) == "0");
  // The scripts check it too, before they write (another client of the same scripts, a hand-made
  // call): the embedded acquire script with a lease PEXPIRE would reject.
  const std::string file = "/tmp/" + unique_name("lock_acquire") + ".lua";
  {
    std::ofstream out(file);
    out << deadbolt::detail::scripts::lock_acquire.body;
  }
  const std::string reply = redis.cli("--eval " + file + " " + name + " , 9223372036854775807 someone:1");
  std::remove(file.c_str());
  CHECK(reply.find("invalid lease") != std::string::npos);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("waiting milliseconds::max() waits") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), fast_config(redis.url()));
  deadbolt::client b(io.executor(), fast_config(redis.url()));
  const std::string name = unique_name("forever");
  auto la = a.lock(name);
  auto lb = b.lock(name);
  REQUIRE(try_lock(la, 1, 0ms, 300ms));
  CHECK(try_lock(lb, 2, std::chrono::milliseconds::max(), 0ms));  // once the lease ends
  CHECK_FALSE(unlock(lb, 2));

  auto sem = a.semaphore(name + "-sem");
  REQUIRE_FALSE(call<bool>([&](auto cb) { sem.async_try_set_permits(0, cb); }).ec);
  std::thread releaser([&] {
    std::this_thread::sleep_for(300ms);
    redis.cli("incrby " + name + "-sem 1");
    redis.cli("publish redisson_sc:{" + name + "-sem} 1");
  });
  CHECK(call<bool>([&](auto cb) { sem.async_try_acquire(1, std::chrono::milliseconds::max(), cb); }).value);
  releaser.join();
}

TEST_CASE("a fenced acquire against a holder without a TTL is busy, not acquired") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), fast_config(redis.url()));
  deadbolt::client b(io.executor(), fast_config(redis.url()));
  const std::string name = unique_name("fenced-persist");
  auto la = a.fenced_lock(name);
  auto lb = b.fenced_lock(name);
  REQUIRE(call<std::optional<std::uint64_t>>([&](auto cb) { la.async_try_lock(1, 0ms, 2000ms, cb); }).value);
  REQUIRE(redis.cli("persist " + name) == "1");  // a Java peer's clearExpire()
  const auto once = call<std::optional<std::uint64_t>>([&](auto cb) { lb.async_try_lock(2, 0ms, 0ms, cb); });
  CHECK_FALSE(once.ec);
  CHECK_FALSE(once.value.has_value());
  std::thread release([&] {
    std::this_thread::sleep_for(300ms);
    call<bool>([&](auto cb) { la.async_force_unlock(cb); });
  });
  // It waits for the holder (its TTL gives no bound: it re-checks), then takes the next token.
  const auto waited = call<std::uint64_t>([&](auto cb) { lb.async_lock(2, cb); });
  release.join();
  CHECK_FALSE(waited.ec);
  CHECK(waited.value == std::stoull(redis.cli("get redisson_lock_token:{" + name + "}")));
  CHECK(redis.cli("hget " + name + " " + b.id() + ":2") == "1");
  CHECK_FALSE(call([&](auto cb) { lb.async_unlock(2, cb); }).ec);
}
