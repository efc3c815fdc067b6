// deadbolt::new_owner_id(): unique, never 0, never a thread id; two async tasks with ids from it
// exclude each other on one client, where a shared constant (what the docs used to suggest) lets the
// second one "acquire" by re-entering the first one's hold.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/owner_id.hpp"
#include "deadbolt/port/hooks.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

namespace owner_id_test {

using namespace std::chrono_literals;
using deadbolt::test::call;

TEST_CASE("new_owner_id: unique across threads, never 0, never a thread id") {
  constexpr int threads = 4, per_thread = 1000;
  std::vector<std::vector<deadbolt::owner_id>> made(threads);
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&made, t] {
      for (int i = 0; i < per_thread; ++i) made[t].push_back(deadbolt::new_owner_id());
    });
  }
  for (auto& w : workers) w.join();
  std::set<deadbolt::owner_id> all;
  for (const auto& ids : made) all.insert(ids.begin(), ids.end());
  CHECK(all.size() == static_cast<std::size_t>(threads * per_thread));
  CHECK(all.count(0) == 0);
  // The blocking API's owners are thread ids: never negative (port::thread_id() < 2^63).
  CHECK(*all.rbegin() < 0);
  CHECK(static_cast<deadbolt::owner_id>(deadbolt::port::thread_id()) > 0);
}

TEST_CASE("two async handlers with their own owner ids do not re-enter each other's hold") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread loop;
  deadbolt::client client(loop.executor(), deadbolt::test::config_for(redis));
  auto lock = client.lock(deadbolt::test::unique_name("owner-ids"));

  const deadbolt::owner_id first = deadbolt::new_owner_id(), second = deadbolt::new_owner_id();
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(first, cb); }).ec);
  const auto other = call<bool>([&](auto cb) { lock.async_try_lock(second, 100ms, 0ms, cb); });
  CHECK_FALSE(other.ec);
  CHECK_FALSE(other.value);  // excluded: a different owner
  CHECK(call<std::int64_t>([&](auto cb) { lock.async_hold_count(first, cb); }).value == 1);
  CHECK(call([&](auto cb) { lock.async_unlock(second, cb); }).ec == deadbolt::errc::not_owner);
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(first, cb); }).ec);

  // What a constant id does instead: the second handler re-enters the first one's hold.
  const deadbolt::owner_id constant = 1;
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(constant, cb); }).ec);
  CHECK(call<bool>([&](auto cb) { lock.async_try_lock(constant, 100ms, 0ms, cb); }).value);
  CHECK(call<std::int64_t>([&](auto cb) { lock.async_hold_count(constant, cb); }).value == 2);
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(constant, cb); }).ec);
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(constant, cb); }).ec);
  client.shutdown();
}

}  // namespace owner_id_test
