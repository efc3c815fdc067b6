// config::metrics and config::log against a real server: the counters move as the events happen
// (renewals, a reconnect after CLIENT KILL, a lost lease, wait time of a contended acquire, hold time,
// table use, a full table), and the log hook hears about them.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "deadbolt/blocking.hpp"
#include "deadbolt/observability.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

namespace metrics_test {

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::eventually;
using deadbolt::test::unique_name;

// Called on the client's loop thread; read by the test's thread.
class counting_hook final : public deadbolt::metrics_hook {
 public:
  std::atomic<int> acquires{0}, acquired{0}, releases{0}, renewals{0}, renewal_failures{0}, lease_lost{0},
      command_reconnects{0}, subscriber_reconnects{0}, disconnects{0}, held_table_full{0};
  std::atomic<std::size_t> waiters_used{0}, waiters_peak{0}, waiters_capacity{0}, channels_peak{0};

  void on_acquire(const deadbolt::acquire_sample& s) override {
    std::lock_guard<std::mutex> hold(mutex_);
    ++acquires;
    if (s.acquired) ++acquired;
    last_wait_ = s.waited;
    last_acquired_name_ = std::string(s.name);
  }
  void on_release(std::string_view, std::chrono::nanoseconds held) override {
    std::lock_guard<std::mutex> hold(mutex_);
    last_hold_ = held;
    ++releases;
  }
  void on_renewal(std::size_t holds) override { renewals += static_cast<int>(holds); }
  void on_renewal_failure(std::size_t, std::error_code) override { ++renewal_failures; }
  void on_lease_lost(std::string_view name) override {
    std::lock_guard<std::mutex> hold(mutex_);
    lost_name_ = std::string(name);
    ++lease_lost;
  }
  void on_reconnect(deadbolt::connection_role role) override {
    ++(role == deadbolt::connection_role::command ? command_reconnects : subscriber_reconnects);
  }
  void on_disconnect(deadbolt::connection_role, std::error_code) override { ++disconnects; }
  void on_table_use(deadbolt::table_kind table, std::size_t used, std::size_t capacity) override {
    if (table == deadbolt::table_kind::waiters) {
      waiters_used = used;
      waiters_capacity = capacity;
      if (used > waiters_peak) waiters_peak = used;
    } else if (table == deadbolt::table_kind::channels && used > channels_peak) {
      channels_peak = used;
    }
  }
  void on_table_full(deadbolt::table_kind table) override {
    if (table == deadbolt::table_kind::held_locks) ++held_table_full;
  }

  std::chrono::nanoseconds last_wait() {
    std::lock_guard<std::mutex> hold(mutex_);
    return last_wait_;
  }
  std::chrono::nanoseconds last_hold() {
    std::lock_guard<std::mutex> hold(mutex_);
    return last_hold_;
  }
  std::string lost_name() {
    std::lock_guard<std::mutex> hold(mutex_);
    return lost_name_;
  }
  std::string last_acquired_name() {
    std::lock_guard<std::mutex> hold(mutex_);
    return last_acquired_name_;
  }

 private:
  std::mutex mutex_;
  std::chrono::nanoseconds last_wait_{}, last_hold_{};
  std::string lost_name_, last_acquired_name_;
};

// Every log line, for checking what was said.
class log_lines {
 public:
  deadbolt::log_hook hook() {
    return [this](deadbolt::log_level level, std::string_view message) {
      std::lock_guard<std::mutex> hold(mutex_);
      lines_.push_back(std::string(deadbolt::to_string(level)) + ": " + std::string(message));
    };
  }
  bool any_with(const std::string& a, const std::string& b = "") {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const auto& l : lines_) {
      if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

struct observed {
  std::shared_ptr<counting_hook> metrics = std::make_shared<counting_hook>();
  log_lines logs;
  deadbolt::config config(const deadbolt::test::redis_server& redis) {
    deadbolt::config cfg = deadbolt::test::config_for(redis);
    cfg.metrics = metrics;
    cfg.log = logs.hook();
    cfg.log_threshold = deadbolt::log_level::debug;
    cfg.watchdog_timeout = 300ms;  // renewed every 100 ms
    return cfg;
  }
};

TEST_CASE("metrics: renewals while held past a renewal period; acquire and hold time on unlock") {
  deadbolt::test::redis_server redis;
  observed o;
  deadbolt::blocking_client client(o.config(redis));
  const std::string name = unique_name("metrics-renewals");
  auto lock = client.lock(name);
  std::error_code ec;
  lock.lock(ec);
  const auto locked_at = std::chrono::steady_clock::now();  // the hold began before this
  REQUIRE_FALSE(ec);
  CHECK(o.metrics->acquires == 1);
  CHECK(o.metrics->acquired == 1);
  CHECK(o.metrics->last_acquired_name() == name);
  CHECK(eventually([&] { return o.metrics->renewals >= 2; }, 5s));
  const auto held_for = std::chrono::steady_clock::now() - locked_at;
  CHECK(o.metrics->releases == 0);
  lock.unlock(ec);
  REQUIRE_FALSE(ec);
  CHECK(o.metrics->releases == 1);
  CHECK(o.metrics->last_hold() >= held_for);
  CHECK(o.metrics->renewal_failures == 0);
  CHECK(o.logs.any_with("command connection to", ": up"));
}

TEST_CASE("metrics: a reconnect counted after CLIENT KILL TYPE normal") {
  deadbolt::test::redis_server redis;
  observed o;
  deadbolt::blocking_client client(o.config(redis));
  REQUIRE_FALSE(client.connect());
  CHECK(o.metrics->command_reconnects == 0);
  CHECK(o.metrics->disconnects == 0);
  REQUIRE(redis.cli("client kill type normal") != "0");  // redis-cli skips itself
  CHECK(eventually([&] { return o.metrics->command_reconnects == 1; }, 5s));
  CHECK(o.metrics->disconnects == 1);
  CHECK(o.logs.any_with("warning: command connection to", ": lost: "));
  CHECK(o.logs.any_with("info: command connection to", ": up again"));
  auto lock = client.lock(unique_name("metrics-reconnect"));
  std::error_code ec;
  CHECK(lock.try_lock(ec));  // and it works
  lock.unlock(ec);
  CHECK_FALSE(ec);
}

TEST_CASE("metrics: a lost lease is counted and logged") {
  deadbolt::test::redis_server redis;
  observed o;
  deadbolt::blocking_client client(o.config(redis));
  const std::string name = unique_name("metrics-lost");
  auto lock = client.lock(name);
  std::error_code ec;
  lock.lock(ec);
  REQUIRE_FALSE(ec);
  REQUIRE(redis.cli("del " + name) == "1");
  REQUIRE(eventually([&] { return o.metrics->lease_lost == 1; }, 5s));
  CHECK(o.metrics->lost_name() == name);
  // The metric is counted just before the line is logged, on the event loop's thread.
  CHECK(eventually([&] { return o.logs.any_with("warning: lease lost: lock " + name, ", owner "); }, 5s));
  lock.unlock(ec);
  CHECK(ec == errc::lease_lost);
  CHECK(o.metrics->releases == 0);  // a lost hold is not released by its unlock
}

TEST_CASE("metrics: a contended acquire records its wait; the waiter table is used, then free") {
  deadbolt::test::redis_server redis;
  observed o;
  deadbolt::blocking_client holder_client(deadbolt::test::config_for(redis));
  deadbolt::blocking_client client(o.config(redis));
  const std::string name = unique_name("metrics-wait");
  auto held = holder_client.lock(name);
  held.lock();
  auto lock = client.lock(name);
  std::error_code wait_ec, unlock_ec;
  bool got = false;
  std::thread waiter([&] {
    got = lock.try_lock_for(10s, 0ms, wait_ec);
    if (got) lock.unlock(unlock_ec);
  });
  CHECK(eventually([&] { return o.metrics->waiters_used == 1; }, 5s));  // parked
  const auto parked_at = std::chrono::steady_clock::now();  // the wait began before this
  std::this_thread::sleep_for(200ms);
  const auto parked_for = std::chrono::steady_clock::now() - parked_at;
  held.unlock();
  waiter.join();
  REQUIRE(got);
  REQUIRE_FALSE(wait_ec);
  CHECK_FALSE(unlock_ec);
  CHECK(o.metrics->acquired == 1);
  CHECK(o.metrics->last_wait() >= parked_for);
  CHECK(o.metrics->waiters_used == 0);
  CHECK(o.metrics->waiters_peak == 1);
  CHECK(o.metrics->waiters_capacity == deadbolt::config{}.max_waiters);
  CHECK(o.metrics->channels_peak >= 1);
}

TEST_CASE("metrics: a full held-lock table is counted") {
  deadbolt::test::redis_server redis;
  observed o;
  deadbolt::config cfg = o.config(redis);
  cfg.max_held_locks = 1;
  deadbolt::blocking_client client(cfg);
  auto first = client.lock(unique_name("metrics-full"));
  auto second = client.lock(unique_name("metrics-full"));
  std::error_code ec;
  first.lock(ec);
  REQUIRE_FALSE(ec);
  CHECK_FALSE(second.try_lock(ec));
  CHECK(ec == errc::held_table_full);
  CHECK(o.metrics->held_table_full == 1);
  CHECK(o.logs.any_with("held-lock table full"));
  first.unlock(ec);
  CHECK_FALSE(ec);
}

}  // namespace metrics_test
