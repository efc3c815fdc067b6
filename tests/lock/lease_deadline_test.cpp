// The client-side lease deadline (docs/locks/reentrant_lock.md, "How long the hold is valid"): a hold
// is lost on the client at the send time of the request that last confirmed it + the lease - the
// drift margin, whether or not anything answers by then. A server frozen with SIGSTOP answers nothing:
// the holder must hear of the loss before the moment the server could expire the key.
#include <doctest/doctest.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <ostream>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;
using clock_type = std::chrono::steady_clock;

namespace {

/// When the lease-lost handler was first called for `name`.
class lost_moment {
 public:
  deadbolt::lease_lost_handler handler(std::string name) {
    return [this, name](std::string_view lost, deadbolt::owner_id) {
      std::lock_guard<std::mutex> g(mutex_);
      if (lost != name || fired_) return;
      fired_ = true;
      at_ = clock_type::now();
      changed_.notify_all();
    };
  }
  bool wait(std::chrono::milliseconds limit, clock_type::time_point& at) {
    std::unique_lock<std::mutex> g(mutex_);
    if (!changed_.wait_for(g, limit, [&] { return fired_; })) return false;
    at = at_;
    return true;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool fired_ = false;
  clock_type::time_point at_;
};

struct resume_on_exit {
  const deadbolt::test::redis_server& redis;
  ~resume_on_exit() { redis.resume(); }
};

constexpr auto lease = 900ms;   // the watchdog renews every 300 ms
constexpr auto margin = 250ms;  // the client's deadline: 650 ms after the last confirmed send

deadbolt::config deadline_config(const deadbolt::test::redis_server& redis) {
  deadbolt::config cfg = config_for(redis);
  cfg.watchdog_timeout = lease;
  cfg.lease_margin = margin;
  cfg.clock_drift_factor = 0;
  cfg.command_timeout = 300ms;
  return cfg;
}

}  // namespace

TEST_CASE("a frozen server: a watchdog hold is lost at send time + lease - margin, before the key can expire") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  lost_moment lost;
  deadbolt::client c(io.executor(), deadline_config(redis));
  const std::string name = unique_name("frozen");
  c.on_lease_lost(lost.handler(name));
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { c.async_connect(cb); }).ec);

  // The acquire is sent after this, so its lease ends on the server after before_send + lease.
  const auto before_send = clock_type::now();
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(1, cb); }).ec);  // watchdog
  redis.pause();  // before the first renewal (a third of the lease): nothing more is confirmed
  resume_on_exit resume{redis};
  const auto valid = call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(1, cb); }).value;
  CHECK(valid > 0ms);
  CHECK(valid <= lease - margin);

  clock_type::time_point lost_at;
  REQUIRE(lost.wait(3 * lease, lost_at));
  // Not before the client's deadline (the send was after before_send), and before the key can expire.
  CHECK(lost_at >= before_send + lease - margin);
  CHECK(lost_at < before_send + lease);
  CHECK(call<bool>([&](auto cb) { lock.async_lease_lost(1, cb); }).value);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(1, cb); }).value == 0ms);
}

TEST_CASE("a fixed lease: the hold is lost on the client at its deadline, and unlock says lease_lost") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  lost_moment lost;
  deadbolt::client c(io.executor(), deadline_config(redis));
  const std::string name = unique_name("fixed");
  c.on_lease_lost(lost.handler(name));
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { c.async_connect(cb); }).ec);

  const auto before_send = clock_type::now();
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(2, lease, cb); }).ec);
  const auto valid = call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(2, cb); }).value;
  CHECK(valid > 0ms);
  CHECK(valid <= lease - margin);

  clock_type::time_point lost_at;
  REQUIRE(lost.wait(3 * lease, lost_at));
  CHECK(lost_at >= before_send + lease - margin);
  CHECK(lost_at < before_send + lease);
  CHECK(call<bool>([&](auto cb) { lock.async_lease_lost(2, cb); }).value);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(2, cb); }).value == 0ms);
  CHECK(call([&](auto cb) { lock.async_unlock(2, cb); }).ec == errc::lease_lost);
}

TEST_CASE("valid_for: zero when not held; a renewed hold stays valid") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  lost_moment lost;
  deadbolt::client c(io.executor(), deadline_config(redis));
  const std::string name = unique_name("valid");
  c.on_lease_lost(lost.handler(name));
  auto lock = c.lock(name);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(3, cb); }).value == 0ms);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(3, cb); }).ec);
  std::this_thread::sleep_for(2 * lease);  // renewed every third of the lease meanwhile
  const auto valid = call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(3, cb); }).value;
  CHECK(valid > 0ms);
  CHECK(valid <= lease - margin);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(4, cb); }).value == 0ms);  // another owner
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(3, cb); }).ec);
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(3, cb); }).value == 0ms);
  clock_type::time_point ignored;
  CHECK_FALSE(lost.wait(0ms, ignored));
}

TEST_CASE("set_lease restarts a fixed lease's deadline (multi_lock's members), also to a longer lease") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  lost_moment lost;
  deadbolt::client c(io.executor(), deadline_config(redis));
  const std::string name = unique_name("set-lease");
  c.on_lease_lost(lost.handler(name));
  auto lock = c.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(5, 400ms, cb); }).ec);  // its own deadline: 150 ms
  REQUIRE(call<bool>([&](auto cb) { lock.async_set_lease(5, 3 * lease, cb); }).value);
  clock_type::time_point ignored;
  CHECK_FALSE(lost.wait(lease, ignored));  // well past the first lease's deadline
  const auto valid = call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(5, cb); }).value;
  CHECK(valid > 0ms);
  CHECK(valid <= 3 * lease - margin - lease);
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(5, cb); }).ec);
}
