// The layers between the handles: a blocking object is its async handle run for the calling thread;
// the composites reach their members through the members' own interface.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <initializer_list>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/hooks.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;

using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

// Each blocking kind wraps the async handle of its own kind.
static_assert(std::is_same_v<decltype(std::declval<deadbolt::blocking_lock&>().async_handle()),
                             const deadbolt::reentrant_lock&>);
static_assert(std::is_same_v<decltype(std::declval<deadbolt::blocking_fair_lock&>().async_handle()),
                             const deadbolt::fair_lock&>);
static_assert(std::is_same_v<decltype(std::declval<deadbolt::blocking_read_lock&>().async_handle()),
                             const deadbolt::read_lock&>);
static_assert(std::is_same_v<decltype(std::declval<deadbolt::blocking_fenced_lock&>().async_handle()),
                             const deadbolt::fenced_lock&>);
static_assert(std::is_same_v<decltype(std::declval<deadbolt::blocking_semaphore&>().async_handle()),
                             const deadbolt::semaphore&>);

// What a user writes, blocking_multi_lock m({fair_a, fair_b}), does not compile: only blocking_lock
// members (the static checks in blocking_lock_test.cpp cover vectors and conversions).
template <typename Composite, typename Member>
constexpr bool takes_members = std::is_constructible_v<Composite, std::initializer_list<Member>>;
static_assert(!takes_members<deadbolt::blocking_multi_lock, deadbolt::blocking_fair_lock>);
static_assert(!takes_members<deadbolt::blocking_red_lock, deadbolt::blocking_write_lock>);
static_assert(takes_members<deadbolt::blocking_multi_lock, deadbolt::blocking_lock>);

TEST_CASE("a blocking lock's async handle is the same lock on the same client; the blocking owner is the thread") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client bc(config_for(redis));
  const std::string name = unique_name("layers-same-lock");
  auto lock = bc.lock(name);
  lock.lock();
  deadbolt::reentrant_lock async = lock.async_handle();
  CHECK(async.name() == lock.name());
  const auto me = static_cast<deadbolt::owner_id>(deadbolt::port::thread_id());
  CHECK(redis.cli("hget " + name + " " + bc.id() + ":" + std::to_string(me)) == "1");
  const auto count = call<std::int64_t>([&](auto cb) { async.async_hold_count(me, cb); });
  CHECK_FALSE(count.ec);
  CHECK(count.value == 1);
  // The async handle releases the calling thread's hold: one client, one hold table.
  CHECK_FALSE(call([&](auto cb) { async.async_unlock(me, cb); }).ec);
  std::error_code ec;
  CHECK_FALSE(lock.is_locked(ec));
  CHECK_FALSE(ec);
  lock.unlock(ec);
  CHECK(ec == deadbolt::errc::not_owner);
}

TEST_CASE("a blocking read/write lock's halves wrap the async halves of one read/write lock") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client bc(config_for(redis));
  const std::string name = unique_name("layers-rw");
  auto rw = bc.read_write_lock(name);
  rw.lock_shared();
  const auto me = static_cast<deadbolt::owner_id>(deadbolt::port::thread_id());
  deadbolt::write_lock write = rw.write().async_handle();
  // The write half is the same lock: the reader cannot take it without waiting.
  const auto got = call<bool>([&](auto cb) { write.async_try_lock(me, cb); });
  CHECK_FALSE(got.ec);
  CHECK_FALSE(got.value);
  CHECK(redis.cli("hget " + name + " mode") == "read");
  rw.unlock_shared();
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("async_set_lease restarts the owner's lease, and only the owner's") {
  deadbolt::test::redis_server redis;
  auto cfg = config_for(redis);
  cfg.watchdog_timeout = 7s;
  const std::string name = unique_name("layers-set-lease");
  deadbolt::test::io_thread io;
  {
    deadbolt::client client(io.executor(), cfg);
    auto lock = client.lock(name);
    CHECK(lock.watchdog_lease() == 7s);
    REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(1, 0ms, 60s, cb); }).value);
    const auto mine = call<bool>([&](auto cb) { lock.async_set_lease(1, 2s, cb); });
    CHECK_FALSE(mine.ec);
    CHECK(mine.value);
    const long long ttl = std::stoll(redis.cli("pttl " + name));
    CHECK(ttl > 0);
    CHECK(ttl <= 2000);
    const auto theirs = call<bool>([&](auto cb) { lock.async_set_lease(2, 60s, cb); });
    CHECK_FALSE(theirs.ec);
    CHECK_FALSE(theirs.value);
    CHECK(std::stoll(redis.cli("pttl " + name)) <= 2000);
    CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  }
  io.drain();
}

TEST_CASE("a lease-lost handler may replace itself: the new one takes over after it returns") {
  deadbolt::test::redis_server redis;
  auto cfg = config_for(redis);
  // Renewed every 500 ms. A 450 ms lease once lapsed on a loaded CI machine under qemu (riscv64)
  // between the acquire and the redis-cli that takes the lock away, so that DEL found nothing.
  cfg.watchdog_timeout = 1500ms;
  const std::string name = unique_name("layers-replace-handler");
  auto first_saw = std::make_shared<std::promise<std::string>>();
  auto second_saw = std::make_shared<std::promise<std::string>>();
  deadbolt::test::io_thread io;
  {
    deadbolt::client client(io.executor(), cfg);
    auto lock = client.lock(name);
    auto state = std::make_shared<std::string>("the first handler's own state");
    client.on_lease_lost([&client, first_saw, second_saw, state](std::string_view, deadbolt::owner_id) {
      client.on_lease_lost([second_saw, once = std::make_shared<std::atomic<bool>>(false)](
                               std::string_view lost, deadbolt::owner_id) {
        if (!once->exchange(true)) second_saw->set_value(std::string(lost));
      });
      // Still running: its captures must still be there (replaced inline, they were freed here).
      first_saw->set_value(*state);
    });
    REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);
    REQUIRE(redis.cli("del " + name) == "1");  // the next renewal finds it gone
    auto first = first_saw->get_future();
    REQUIRE(first.wait_for(5s) == std::future_status::ready);
    CHECK(first.get() == "the first handler's own state");
    REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(2, cb); }).ec);
    REQUIRE(redis.cli("del " + name) == "1");
    auto second = second_saw->get_future();
    REQUIRE(second.wait_for(5s) == std::future_status::ready);
    CHECK(second.get() == name);
  }
  io.drain();
}

TEST_CASE("a blocking composite without members answers invalid_config, as the async one does") {
  deadbolt::blocking_multi_lock none(std::vector<deadbolt::blocking_lock>{});
  deadbolt::blocking_red_lock no_quorum(std::vector<deadbolt::blocking_lock>{});
  std::error_code ec;
  CHECK_FALSE(none.try_lock(ec));
  CHECK(ec == deadbolt::errc::invalid_config);
  none.lock(ec);
  CHECK(ec == deadbolt::errc::invalid_config);
  CHECK(none.unlock(ec).empty());
  CHECK(ec == deadbolt::errc::invalid_config);
  CHECK(no_quorum.try_lock_for(10ms, 1s, ec) == 0ms);
  CHECK(ec == deadbolt::errc::invalid_config);
}
