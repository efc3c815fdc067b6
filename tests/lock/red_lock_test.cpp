// The red lock (Redisson RedissonRedLock, Redlock) over five real redis-servers: quorum, servers
// down, validity, mutual exclusion, and release on every server after a failure.
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lock/multi_test.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::unique_name;

namespace {
using errors = std::vector<std::error_code>;

int count_holding(const std::vector<deadbolt::test::redis_server>& servers, const std::string& name) {
  int n = 0;
  for (const auto& s : servers) n += s.cli("exists " + name) == "1" ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("red lock over five servers: validity reported, all five held, all released") {
  auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() == 5);
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-basic");
  deadbolt::red_lock lock(cs.locks(name, 5));
  CHECK(lock.quorum() == 3);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 500ms, 5s, cb); });
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  REQUIRE_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(got.value <= 5000ms - 52ms);  // drift: 1% of the lease + 2 ms
  CHECK(got.value >= 5000ms - 52ms - took);
  CHECK(count_holding(servers, name) == 5);
  // Taken for 2 x wait, then PEXPIREd to the lease.
  const int ttl = std::stoi(servers[4].cli("pttl " + name));
  CHECK(ttl > 4000);
  CHECK(ttl <= 5000);

  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK_FALSE(released.ec);
  CHECK(count_holding(servers, name) == 0);
  // Not held at all: not_owner.
  CHECK(call<errors>([&](auto cb) { lock.async_unlock(1, cb); }).ec == errc::not_owner);

  // The watchdog lease: validity from config::watchdog_timeout (30 s).
  auto watched = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(2, cb); });
  REQUIRE_FALSE(watched.ec);
  CHECK(watched.value > 29000ms);
  CHECK(watched.value <= 30000ms - 302ms);
  CHECK_FALSE(call<errors>([&](auto cb) { lock.async_unlock(2, cb); }).ec);
}

TEST_CASE("two red locks contending: the second fails while the first holds") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients first(io, servers);
  deadbolt::test::clients second(io, servers);
  const std::string name = unique_name("red-contend");
  deadbolt::red_lock a(first.locks(name, 5));
  deadbolt::red_lock b(second.locks(name, 5));

  REQUIRE(call<std::chrono::milliseconds>([&](auto cb) { a.async_try_lock(1, 300ms, 10s, cb); }).value > 0ms);
  auto lost = call<std::chrono::milliseconds>([&](auto cb) { b.async_try_lock(1, 300ms, 10s, cb); });
  CHECK_FALSE(lost.ec);  // busy, not broken
  CHECK(lost.value == 0ms);
  for (const auto& s : servers) CHECK(s.cli("hget " + name + " " + first.all[0]->id() + ":1").size() <= 1);
  CHECK(count_holding(servers, name) == 5);  // the loser left the winner's holds alone

  // A minority held by someone else still lets a majority win.
  CHECK_FALSE(call<errors>([&](auto cb) { a.async_unlock(1, cb); }).ec);
  auto blocker0 = first.all[0]->lock(name);
  auto blocker1 = first.all[1]->lock(name);
  REQUIRE(call<bool>([&](auto cb) { blocker0.async_try_lock(7, cb); }).value);
  REQUIRE(call<bool>([&](auto cb) { blocker1.async_try_lock(7, cb); }).value);
  auto won = call<std::chrono::milliseconds>([&](auto cb) { b.async_try_lock(1, 300ms, 10s, cb); });
  CHECK_FALSE(won.ec);
  CHECK(won.value > 0ms);
  auto released = call<errors>([&](auto cb) { b.async_unlock(1, cb); });
  CHECK_FALSE(released.ec);  // the two members it did not get answer not_owner, which is expected
  CHECK(released.value[0] == errc::not_owner);
  CHECK(servers[0].cli("exists " + name) == "1");  // still the blocker's
  CHECK(servers[2].cli("exists " + name) == "0");
  CHECK_FALSE(call([&](auto cb) { blocker0.async_unlock(7, cb); }).ec);
  CHECK_FALSE(call([&](auto cb) { blocker1.async_unlock(7, cb); }).ec);
}

TEST_CASE("red lock with two of five servers down acquires") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-two-down");
  deadbolt::red_lock lock(cs.locks(name, 5));
  deadbolt::test::stopped_servers down;
  down.stop(servers[1]);
  down.stop(servers[3]);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 10s, cb); });
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(servers[0].cli("exists " + name) == "1");
  CHECK(servers[2].cli("exists " + name) == "1");
  CHECK(servers[4].cli("exists " + name) == "1");

  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK(released.ec);  // the down servers' errors are reported...
  CHECK_FALSE(released.value[0]);
  CHECK(released.value[1]);
  CHECK_FALSE(released.value[4]);
  CHECK(servers[0].cli("exists " + name) == "0");  // ...and the live ones released anyway
  CHECK(servers[2].cli("exists " + name) == "0");
  CHECK(servers[4].cli("exists " + name) == "0");
}

TEST_CASE("red lock with three of five servers down fails and leaves nothing on the live ones") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-three-down");
  deadbolt::red_lock lock(cs.locks(name, 5));
  deadbolt::test::stopped_servers down;
  down.stop(servers[0]);
  down.stop(servers[2]);
  down.stop(servers[4]);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 500ms, 10s, cb); });
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(got.ec == errc::quorum_not_reached);
  CHECK(got.value == 0ms);
  CHECK(servers[1].cli("exists " + name) == "0");
  CHECK(servers[3].cli("exists " + name) == "0");
}

TEST_CASE("blocking red lock: std::unique_lock and the validity") {
  auto servers = deadbolt::test::redis_servers();
  std::vector<std::unique_ptr<deadbolt::blocking_client>> clients;
  std::vector<deadbolt::blocking_lock> members;
  const std::string name = unique_name("red-blocking");
  for (std::size_t i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<deadbolt::blocking_client>(deadbolt::test::fast_config(servers[i])));
    members.push_back(clients.back()->lock(name));
  }
  deadbolt::blocking_red_lock lock(members);
  CHECK(lock.quorum() == 2);
  {
    std::unique_lock<deadbolt::blocking_red_lock> guard(lock, 500ms);
    REQUIRE(guard.owns_lock());
    CHECK(count_holding(servers, name) == 3);
    std::thread([&] { CHECK_FALSE(lock.try_lock_for(100ms)); }).join();
  }
  CHECK(count_holding(servers, name) == 0);
  std::error_code ec;
  const auto validity = lock.try_lock_for(200ms, 3s, ec);
  CHECK_FALSE(ec);
  CHECK(validity > 2500ms);
  CHECK(validity < 3000ms);
  lock.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(count_holding(servers, name) == 0);
}

TEST_CASE("red lock with a paused server: that member times out, the others give the quorum") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-paused");
  deadbolt::red_lock lock(cs.locks(name, 3));
  servers[0].pause();
  struct resume_on_exit {
    const deadbolt::test::redis_server& r;
    ~resume_on_exit() { r.resume(); }
  } guard{servers[0]};

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); });
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < 2s);  // bounded by the member's command_timeout (300 ms), checked once
  CHECK_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(got.value < 5000ms - std::chrono::duration_cast<std::chrono::milliseconds>(took) + 10ms);
  CHECK(servers[1].cli("exists " + name) == "1");
  CHECK(servers[2].cli("exists " + name) == "1");
  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK(released.ec);  // the paused member's unlock fails
  CHECK(servers[1].cli("exists " + name) == "0");
  CHECK(servers[2].cli("exists " + name) == "0");
}
