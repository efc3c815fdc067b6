// Every lock kind, the semaphores and the latch over TLS (fixture "tls": tests/support/redis-tls-fixture).
#include <doctest/doctest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/sync.hpp"
#include "tls/tls_servers.hpp"

using namespace std::chrono_literals;
using deadbolt::test::call;

namespace tls_kinds_test {

std::string name(const char* base) {
  static int n = 0;
  return std::string("tls-") + base + "-" + std::to_string(++n);
}

// Locks for owner 1, finds the lock taken for owner 2, unlocks.
template <typename Lock>
void lock_cycle(Lock& lock) {
  auto got = call<bool>([&](auto cb) { lock.async_try_lock(1, 0ms, 10s, cb); });
  REQUIRE_FALSE(got.ec);
  CHECK(got.value);
  CHECK_FALSE(call<bool>([&](auto cb) { lock.async_try_lock(2, 0ms, 10s, cb); }).value);
  // (a multi lock's unlock also reports each member's outcome)
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, [cb](std::error_code ec, auto&&...) mutable { cb(ec); }); }).ec);
}

struct tls_client {
  deadbolt::test::tls_servers servers;
  deadbolt::test::io_thread io;
  deadbolt::client client{io.executor(), servers.config_for("tls")};
};

}  // namespace tls_kinds_test

using tls_kinds_test::lock_cycle;
using tls_kinds_test::name;

TEST_CASE_FIXTURE(tls_kinds_test::tls_client, "TLS: reentrant, fenced, spin, fair, read, write and multi locks") {
  auto reentrant = client.lock(name("reentrant"));
  lock_cycle(reentrant);
  auto fenced = client.fenced_lock(name("fenced"));
  lock_cycle(fenced);
  auto spin = client.spin_lock(name("spin"));
  lock_cycle(spin);
  auto fair = client.fair_lock(name("fair"));
  lock_cycle(fair);
  auto rw = client.read_write_lock(name("rw"));
  lock_cycle(rw.write());
  auto got = call<bool>([&](auto cb) { rw.read().async_try_lock(1, 0ms, 10s, cb); });
  CHECK(got.value);
  CHECK_FALSE(call([&](auto cb) { rw.read().async_unlock(1, cb); }).ec);
  deadbolt::multi_lock multi(std::vector<deadbolt::reentrant_lock>{client.lock(name("m1")), client.lock(name("m2"))});
  lock_cycle(multi);
}

TEST_CASE_FIXTURE(tls_kinds_test::tls_client, "TLS: a waiter is woken through the subscriber connection") {
  // The lease (60 s) and the waiter's recheck (5 s) outlast its wait (3 s): only the release's message
  // can wake owner 2 in time.
  auto lock = client.lock(name("wait"));
  REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(1, 0ms, 60s, cb); }).value);
  bool second = false;
  std::error_code second_ec;
  auto waiting = std::async(std::launch::async, [&] {
    auto r = call<bool>([&](auto cb) { lock.async_try_lock(2, 3s, 10s, cb); });
    second = r.value;
    second_ec = r.ec;
  });
  std::this_thread::sleep_for(200ms);  // owner 2 is (most likely) parked on the channel by now
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  waiting.get();
  CHECK_FALSE(second_ec);
  CHECK(second);
}

TEST_CASE_FIXTURE(tls_kinds_test::tls_client, "TLS: semaphore, expirable semaphore and latch") {
  auto sem = client.semaphore(name("sem"));
  CHECK(call<bool>([&](auto cb) { sem.async_try_set_permits(1, cb); }).value);
  CHECK(call<bool>([&](auto cb) { sem.async_try_acquire(1, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { sem.async_try_acquire(1, cb); }).value);
  CHECK_FALSE(call([&](auto cb) { sem.async_release(1, cb); }).ec);

  auto expirable = client.expirable_semaphore(name("expirable"));
  CHECK(call<bool>([&](auto cb) { expirable.async_try_set_permits(1, cb); }).value);
  auto permit = call<deadbolt::permit_id>([&](auto cb) { expirable.async_acquire(10s, cb); });
  REQUIRE_FALSE(permit.ec);
  CHECK_FALSE(call([&](auto cb) { expirable.async_release(permit.value, cb); }).ec);

  auto latch = client.count_down_latch(name("latch"));
  CHECK(call<bool>([&](auto cb) { latch.async_try_set_count(1, cb); }).value);
  CHECK(call<std::int64_t>([&](auto cb) { latch.async_count_down(cb); }).value == 0);
  CHECK(call<bool>([&](auto cb) { latch.async_await(0ms, cb); }).value);
}
