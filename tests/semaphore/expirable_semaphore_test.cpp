// The permit-expirable semaphore (Redisson RPermitExpirableSemaphore, docs/protocol.md §9) against a real
// redis-server.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <optional>
#include <string>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/hooks.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"
#include "semaphore/pubsub.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::permit_id;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;
using maybe_permit = std::optional<permit_id>;

namespace {
// ZSCORE of a permit in {name}:timeout (the member is the id's raw bytes), through the client.
std::optional<double> score(deadbolt::client& c, const std::string& name, const permit_id& id) {
  auto r = call<deadbolt::reply>([&](auto cb) {
    c.async_command({"ZSCORE", "{" + name + "}:timeout", std::string(id.raw())}, cb);
  });
  REQUIRE_FALSE(r.ec);
  if (r.value.is_null()) return std::nullopt;
  return std::stod(r.value.text);
}
}  // namespace

TEST_CASE("expirable semaphore: Redisson's data layout, ids, release by id, lease update") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("permit-layout");
  auto s = c.expirable_semaphore(name);

  CHECK(call<bool>([&](auto cb) { s.async_try_set_permits(2, cb); }).value);
  CHECK(redis.cli("get " + name) == "2");
  auto forever = call<permit_id>([&](auto cb) { s.async_acquire(0ms, cb); });
  REQUIRE_FALSE(forever.ec);
  const std::string hex = forever.value.hex();
  CHECK(hex.size() == 32);
  CHECK(hex.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(permit_id::from_hex(hex) == forever.value);
  CHECK_FALSE(permit_id::from_hex("xyz"));
  CHECK(score(c, name, forever.value) == 922337203685477.0);  // NONEXP

  const std::int64_t before = deadbolt::port::wall_clock_ms();
  auto leased = call<maybe_permit>([&](auto cb) { s.async_try_acquire(0ms, 10s, cb); });
  REQUIRE_FALSE(leased.ec);
  REQUIRE(leased.value);
  const double expiry = *score(c, name, *leased.value);
  CHECK(expiry >= static_cast<double>(before + 10000));
  CHECK(expiry <= static_cast<double>(deadbolt::port::wall_clock_ms() + 10000));
  CHECK(redis.cli("zcard {" + name + "}:timeout") == "2");
  CHECK(redis.cli("get " + name) == "0");
  CHECK_FALSE(call<maybe_permit>([&](auto cb) { s.async_try_acquire(0ms, 0ms, cb); }).value);

  // Lease update: never expires now.
  CHECK(call<bool>([&](auto cb) { s.async_update_lease(*leased.value, 0ms, cb); }).value);
  CHECK(score(c, name, *leased.value) == 922337203685477.0);

  // Release by id; a second release, or an unknown id, is refused.
  CHECK_FALSE(call([&](auto cb) { s.async_release(forever.value, cb); }).ec);
  CHECK(redis.cli("get " + name) == "1");
  CHECK_FALSE(score(c, name, forever.value));
  CHECK(call([&](auto cb) { s.async_release(forever.value, cb); }).ec == errc::no_such_permit);
  const permit_id unknown = *permit_id::from_hex("00112233445566778899aabbccddeeff");
  CHECK(call([&](auto cb) { s.async_release(unknown, cb); }).ec == errc::no_such_permit);
  CHECK_FALSE(call<bool>([&](auto cb) { s.async_try_release(unknown, cb); }).value);
  CHECK_FALSE(call<bool>([&](auto cb) { s.async_update_lease(unknown, 1s, cb); }).value);
  CHECK(call<bool>([&](auto cb) { s.async_try_release(*leased.value, cb); }).value);
  CHECK(call<std::int64_t>([&](auto cb) { s.async_available_permits(cb); }).value == 2);
  CHECK(call<maybe_permit>([&](auto cb) { s.async_try_acquire(0ms, -5ms, cb); }).ec == errc::invalid_argument);

  redis.cli("hset " + name + "-hash f 1");
  CHECK(call<maybe_permit>([&](auto cb) { c.expirable_semaphore(name + "-hash").async_try_acquire(0ms, 0ms, cb); })
            .ec == errc::wrong_type);
}

TEST_CASE("expirable semaphore: an expired permit comes back to a waiter; its id is then refused") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("permit-expire");
  REQUIRE(call<bool>([&](auto cb) { a.expirable_semaphore(name).async_try_set_permits(1, cb); }).value);
  auto short_lease = call<permit_id>([&](auto cb) { a.expirable_semaphore(name).async_acquire(200ms, cb); });
  REQUIRE_FALSE(short_lease.ec);

  // The waiter parks until the earliest expiry the script told it, not the 5 s re-check.
  const auto started = std::chrono::steady_clock::now();
  auto next = call<maybe_permit>([&](auto cb) { b.expirable_semaphore(name).async_try_acquire(3s, 0ms, cb); });
  REQUIRE_FALSE(next.ec);
  REQUIRE(next.value);
  CHECK(std::chrono::steady_clock::now() - started < 2500ms);  // well before the 3 s wait ends
  CHECK(*next.value != short_lease.value);
  // The expired permit was reclaimed: its id is unknown now.
  CHECK(call([&](auto cb) { a.expirable_semaphore(name).async_release(short_lease.value, cb); }).ec ==
        errc::no_such_permit);
  CHECK_FALSE(call([&](auto cb) { b.expirable_semaphore(name).async_release(*next.value, cb); }).ec);
  CHECK(redis.cli("get " + name) == "1");
}

TEST_CASE("expirable semaphore: a release wakes a waiter on redisson_sc:{name}; cancellation takes nothing") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("permit-wake");
  const std::string channel = "redisson_sc:{" + name + "}";
  REQUIRE(call<bool>([&](auto cb) { a.expirable_semaphore(name).async_try_set_permits(1, cb); }).value);
  auto held = call<permit_id>([&](auto cb) { a.expirable_semaphore(name).async_acquire(0ms, cb); });
  REQUIRE_FALSE(held.ec);

  std::promise<maybe_permit> got;
  b.expirable_semaphore(name).async_try_acquire(10s, 0ms, [&](std::error_code ec, maybe_permit id) {
    got.set_value(ec ? std::nullopt : id);
  });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  const auto released = std::chrono::steady_clock::now();
  REQUIRE_FALSE(call([&](auto cb) { a.expirable_semaphore(name).async_release(held.value, cb); }).ec);
  auto f = got.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  const maybe_permit id = f.get();
  REQUIRE(id);
  CHECK(std::chrono::steady_clock::now() - released < 3s);  // the message, not the 5 s re-check

  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  auto waiter = b.expirable_semaphore(name);
  asio::post(io.io, [&] {
    waiter.async_acquire(0ms, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec, permit_id) {
                           done.set_value(ec);
                         }));
  });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto d = done.get_future();
  REQUIRE(d.wait_for(3s) == std::future_status::ready);
  CHECK(d.get() == asio::error::operation_aborted);
  REQUIRE_FALSE(call([&](auto cb) { a.expirable_semaphore(name).async_release(*id, cb); }).ec);
  CHECK(redis.cli("get " + name) == "1");
  CHECK(redis.cli("zcard {" + name + "}:timeout") == "0");
}

TEST_CASE("blocking_expirable_semaphore") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client c(config_for(redis));
  const std::string name = unique_name("permit-blocking");
  auto s = c.expirable_semaphore(name);
  std::error_code ec;
  CHECK(s.try_set_permits(1, ec));
  const permit_id id = s.acquire(5s);
  CHECK_FALSE(s.try_acquire(0ms, 0ms, ec));
  CHECK_FALSE(ec);
  CHECK(s.update_lease(id, 150ms, ec));
  const auto started = std::chrono::steady_clock::now();
  auto again = s.try_acquire(3s, 0ms, ec);  // the updated lease runs out
  CHECK_FALSE(ec);
  REQUIRE(again);
  CHECK(std::chrono::steady_clock::now() - started < 2500ms);  // before the 3 s wait ends
  s.release(*again, ec);
  CHECK_FALSE(ec);
  s.release(id, ec);
  CHECK(ec == errc::no_such_permit);
  CHECK(s.available_permits(ec) == 1);
}

TEST_CASE("add_permits publishes what Redisson does: the change, and only when permits were added") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("exp-add");
  const std::string channel = "redisson_sc:{" + name + "}";
  auto sem = c.expirable_semaphore(name);
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(5, cb); }).value);
  // A listener on the channel for a while (redis-cli prints each message as three lines).
  auto listened = std::async(std::launch::async, [&] {
    return redis.cli("--no-raw subscribe '" + channel + "' & sleep 1.5; kill $! 2>/dev/null; wait");
  });
  REQUIRE(deadbolt::test::subscribers_reach(redis, channel, 1));
  CHECK_FALSE(call<std::int64_t>([&](auto cb) { sem.async_add_permits(3, cb); }).ec);
  CHECK_FALSE(call<std::int64_t>([&](auto cb) { sem.async_add_permits(-2, cb); }).ec);
  CHECK_FALSE(call<std::int64_t>([&](auto cb) { sem.async_add_permits(1, cb); }).ec);
  CHECK(redis.cli("get " + name) == "7");
  const std::string out = listened.get();
  INFO("listener: " << out);
  CHECK(out.find("\"message\"") != std::string::npos);
  CHECK(out.find("\"3\"") != std::string::npos);
  CHECK(out.find("\"1\"") != std::string::npos);
  CHECK(out.find("\"-2\"") == std::string::npos);  // never a negative payload
  CHECK(out.find("\"8\"") == std::string::npos);   // never the total
}
