// deadbolt::checked_guard: releases in its destructor and reports the outcome through the error code it
// was given (a lease lost while held is errc::lease_lost), or at once through release(); for every
// blocking lock kind, the multi lock and the red lock.
#include <doctest/doctest.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>

#include "deadbolt/blocking.hpp"
#include "deadbolt/blocking_multi_lock.hpp"
#include "deadbolt/checked_guard.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

namespace checked_guard_test {

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::eventually;
using deadbolt::test::unique_name;

/// A short watchdog: the renewal after a DEL comes within 100 ms.
deadbolt::config short_watchdog(const deadbolt::test::redis_server& redis) {
  deadbolt::config cfg = deadbolt::test::config_for(redis);
  cfg.watchdog_timeout = 300ms;
  return cfg;
}

TEST_CASE("checked_guard holds for its scope and reports a clean release") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(deadbolt::test::config_for(redis));
  auto lock = client.lock(unique_name("guard-clean"));
  std::error_code ec = errc::protocol_error;  // the guard overwrites it
  {
    deadbolt::checked_guard guard(lock, ec);
    REQUIRE(guard.owns_lock());
    CHECK_FALSE(ec);
    std::error_code query;
    CHECK(lock.hold_count(query) == 1);
    bool other_got_it = true;
    std::thread([&] { other_got_it = lock.try_lock(); }).join();
    CHECK_FALSE(other_got_it);
  }
  CHECK_FALSE(ec);
  std::error_code query;
  CHECK_FALSE(lock.is_locked(query));
}

TEST_CASE("checked_guard's destructor reports a lease lost while it held the lock") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(short_watchdog(redis));
  const std::string name = unique_name("guard-lost");
  auto lock = client.lock(name);
  std::error_code ec;
  {
    deadbolt::checked_guard guard(lock, ec);
    REQUIRE(guard);
    REQUIRE(redis.cli("del " + name) == "1");  // taken away behind the holder's back
    REQUIRE(eventually([&] { return lock.lease_lost(); }, 5s));
  }
  CHECK(ec == errc::lease_lost);
}

// The hold's remaining validity on the client (docs/locks/reentrant_lock.md, "How long the hold is
// valid"): at most the lease less the margin (300 ms * 1% + 2 ms), on every blocking kind.
template <typename Lock>
void check_valid_for(Lock& lock) {
  std::error_code ec;
  CHECK(lock.valid_for() == 0ms);  // not held
  {
    deadbolt::checked_guard guard(lock, ec);
    REQUIRE(guard);
    const auto valid = guard.valid_for();
    CHECK(valid > 0ms);
    CHECK(valid <= 295ms);
    // The same hold, asked a moment later: the watchdog (lease 300 ms) may have renewed it in
    // between, so this is only "still valid, never more than a fresh lease" (the countdown without
    // renewals is checked with a fixed lease below).
    const auto later = lock.valid_for();
    CHECK(later > 0ms);
    CHECK(later <= 295ms);
    std::this_thread::sleep_for(400ms);  // longer than the lease: the watchdog renews it meanwhile
    CHECK(guard.valid_for() > 0ms);
    CHECK(guard.release() == std::error_code());
    CHECK(guard.valid_for() == 0ms);
  }
  CHECK(lock.valid_for() == 0ms);
}

TEST_CASE("checked_guard::valid_for: how long the hold is still valid, on every blocking kind; zero once released") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(short_watchdog(redis));
  auto plain = client.lock(unique_name("valid-plain"));
  check_valid_for(plain);
  auto fenced = client.fenced_lock(unique_name("valid-fenced"));
  check_valid_for(fenced);
  auto fair = client.fair_lock(unique_name("valid-fair"));
  check_valid_for(fair);
  auto rw = client.read_write_lock(unique_name("valid-rw"));
  check_valid_for(rw.read());
  check_valid_for(rw.write());
}

TEST_CASE("checked_guard with a fixed lease: valid_for counts down to zero, and the release says lease_lost") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(short_watchdog(redis));
  auto lock = client.lock(unique_name("valid-fixed"));
  std::error_code ec;
  {
    deadbolt::checked_guard guard(lock, ec, 200ms);
    REQUIRE(guard);
    CHECK(guard.valid_for() > 0ms);
    const auto first = guard.valid_for();
    CHECK(first <= 196ms);  // 200 ms less 1% + 2 ms
    std::this_thread::sleep_for(20ms);
    CHECK(guard.valid_for() < first);  // no watchdog: it only counts down
    REQUIRE(eventually([&] { return lock.lease_lost(); }, 2s));  // lost on the client at its deadline
    CHECK(guard.valid_for() == 0ms);
  }
  CHECK(ec == errc::lease_lost);
}

TEST_CASE("checked_guard::release reports at once; the destructor then does nothing") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(short_watchdog(redis));
  const std::string name = unique_name("guard-release");
  auto lock = client.fenced_lock(name);
  std::error_code ec;
  {
    deadbolt::checked_guard guard(lock, ec);
    REQUIRE(guard);
    CHECK(guard.token() > 0);
    REQUIRE(redis.cli("del " + name) == "1");
    REQUIRE(eventually([&] { return lock.lease_lost(); }, 5s));
    CHECK(guard.release() == errc::lease_lost);
    CHECK(ec == errc::lease_lost);
    CHECK_FALSE(guard.owns_lock());
    ec.clear();
    CHECK_FALSE(guard.release());  // nothing held any more
  }
  CHECK_FALSE(ec);  // the destructor had nothing to release
}

TEST_CASE("checked_guard with a wait: not acquired, the error code says why (empty: the wait ran out)") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(deadbolt::test::config_for(redis));
  auto rw = client.read_write_lock(unique_name("guard-timed"));
  std::error_code ec;
  deadbolt::checked_guard writer(rw.write(), 0ms, ec);
  REQUIRE(writer);
  std::thread([&] {
    std::error_code other_ec = errc::protocol_error;
    {
      deadbolt::checked_guard reader(rw.read(), 100ms, other_ec);
      CHECK_FALSE(reader);
      CHECK_FALSE(other_ec);  // the wait ran out: no error
      other_ec = errc::protocol_error;
    }
    CHECK(other_ec == errc::protocol_error);  // nothing to release: left as it was
  }).join();
  CHECK_FALSE(writer.release());

  auto gone = std::make_unique<deadbolt::blocking_client>(deadbolt::test::config_for(redis));
  auto fair = gone->fair_lock(unique_name("guard-error"));
  gone.reset();  // a handle that outlives its client answers shutting_down
  deadbolt::checked_guard failed(fair, 1s, ec);
  CHECK_FALSE(failed);
  CHECK(ec == errc::shutting_down);
}

TEST_CASE("checked_guard over a multi lock and a red lock reports a member's lost lease") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(short_watchdog(redis));
  const std::string a = unique_name("guard-multi"), b = unique_name("guard-multi");
  deadbolt::blocking_multi_lock multi({client.lock(a), client.lock(b)});
  std::error_code ec;
  {
    deadbolt::checked_guard guard(multi, ec);
    REQUIRE(guard);
    REQUIRE(redis.cli("del " + b) == "1");
    auto member = client.lock(b);
    REQUIRE(eventually([&] { return member.lease_lost(); }, 5s));
  }
  CHECK(ec == errc::lease_lost);

  deadbolt::blocking_red_lock red({client.lock(a + "-r1"), client.lock(a + "-r2"), client.lock(a + "-r3")});
  {
    deadbolt::checked_guard guard(red, 1s, ec, 10s);
    CHECK(guard);
    CHECK_FALSE(ec);
  }
  CHECK_FALSE(ec);
  std::error_code query;
  CHECK_FALSE(client.lock(a + "-r1").is_locked(query));
}

}  // namespace checked_guard_test
