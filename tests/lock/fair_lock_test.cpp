// The fair lock (Redisson RFairLock, docs/protocol.md §3) against a real redis-server: the queue and
// timeout keys, FIFO order (also through a queue that never empties), and waiters that give up
// leaving nothing behind.
#include <doctest/doctest.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <memory>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/hooks.hpp"
#include "scripts.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

namespace {

std::string queue_key(const std::string& name) { return "redisson_lock_queue:{" + name + "}"; }
std::string timeout_key(const std::string& name) { return "redisson_lock_timeout:{" + name + "}"; }

// Waits (bounded) until the queue holds `n` waiters.
void wait_for_queue(const deadbolt::test::redis_server& redis, const std::string& name, int n) {
  for (int i = 0; i < 500 && redis.cli("llen " + queue_key(name)) != std::to_string(n); ++i) {
    std::this_thread::sleep_for(10ms);
  }
  REQUIRE(redis.cli("llen " + queue_key(name)) == std::to_string(n));
}

// The embedded fair lock scripts run by hand (redis-cli --eval) with a clock the test sets, so that
// the queue's deadline arithmetic can be followed step by step, independently of real time.
class fair_scripts {
 public:
  fair_scripts(const deadbolt::test::redis_server& redis, std::string name)
      : redis_(redis), name_(std::move(name)), acquire_(write("fair_acquire", deadbolt::detail::scripts::fair_acquire.body)),
        unlock_(write("fair_unlock", deadbolt::detail::scripts::fair_unlock.body)) {}
  ~fair_scripts() {
    std::remove(acquire_.c_str());
    std::remove(unlock_.c_str());
  }
  fair_scripts(const fair_scripts&) = delete;
  fair_scripts& operator=(const fair_scripts&) = delete;

  /// fair_acquire.lua for `owner` at wall-clock `now_ms`, with `lease_ms` and the waiter timeout `wait_ms`.
  std::string acquire(const std::string& owner, long long now_ms, long long lease_ms, long long wait_ms) const {
    return redis_.cli("--eval " + acquire_ + " " + name_ + " " + queue_key(name_) + " " + timeout_key(name_) + " , " +
                      std::to_string(lease_ms) + " " + owner + " " + std::to_string(wait_ms) + " " + std::to_string(now_ms));
  }
  /// fair_unlock.lua: `owner` releases its hold at `now_ms`.
  std::string unlock(const std::string& owner, long long now_ms) const {
    return redis_.cli("--eval " + unlock_ + " " + name_ + " " + queue_key(name_) + " " + timeout_key(name_) +
                      " redisson_lock__channel:{" + name_ + "} " + unique_name("latch") + " , 0 30000 " + owner + " " +
                      std::to_string(now_ms) + " publish 1000");
  }
  bool holds(const std::string& owner) const { return redis_.cli("hget " + name_ + " " + owner) == "1"; }
  bool queued(const std::string& owner) const {
    return redis_.cli("zscore " + timeout_key(name_) + " " + owner) != "";
  }

 private:
  static std::string write(const char* base, std::string_view body) {
    const std::string file = "/tmp/" + unique_name(base) + ".lua";
    std::ofstream(file) << body;
    return file;
  }

  const deadbolt::test::redis_server& redis_;
  std::string name_;
  std::string acquire_, unlock_;
};

}  // namespace

TEST_CASE("fair lock: the hash, queue and timeout keys as Redisson keeps them") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("fair-layout");
  auto la = a.fair_lock(name);
  auto lb = b.fair_lock(name);

  REQUIRE_FALSE(call([&](auto cb) { la.async_lock(1, cb); }).ec);
  CHECK(redis.cli("hget " + name + " " + a.id() + ":1") == "1");
  // A try without a wait never joins the queue.
  CHECK_FALSE(call<bool>([&](auto cb) { lb.async_try_lock(2, cb); }).value);
  CHECK(redis.cli("exists " + queue_key(name)) == "0");

  std::promise<bool> got;
  lb.async_try_lock(2, 10s, 0ms, [&](std::error_code ec, bool ok) { got.set_value(!ec && ok); });
  wait_for_queue(redis, name, 1);
  const std::string waiter = b.id() + ":2";
  CHECK(redis.cli("lindex " + queue_key(name) + " 0") == waiter);
  // Its deadline: the holder's TTL plus its wait (10 s) from now, in wall-clock ms.
  const auto now_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                          std::chrono::system_clock::now().time_since_epoch()).count();
  const long long deadline = std::stoll(redis.cli("zscore " + timeout_key(name) + " " + waiter));
  CHECK(deadline > now_ms + 30000);
  CHECK(deadline < now_ms + 41000);

  REQUIRE_FALSE(call([&](auto cb) { la.async_unlock(1, cb); }).ec);
  auto f = got.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);  // woken by the message, not the 30 s TTL
  CHECK(f.get());
  CHECK(redis.cli("hget " + name + " " + waiter) == "1");
  CHECK(redis.cli("exists " + queue_key(name)) == "0");
  CHECK(redis.cli("exists " + timeout_key(name)) == "0");
  // A fair lock excludes a plain lock of the same name (one hash).
  CHECK_FALSE(call<bool>([&](auto cb) { a.lock(name).async_try_lock(1, cb); }).value);
  REQUIRE_FALSE(call([&](auto cb) { lb.async_unlock(2, cb); }).ec);
  CHECK(redis.cli("exists " + name) == "0");
}

TEST_CASE("fair lock: five waiters are served in arrival order, and one that gives up leaves the queue") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client a(io.executor(), config_for(redis));
  deadbolt::client b(io.executor(), config_for(redis));
  const std::string name = unique_name("fair-fifo");
  REQUIRE_FALSE(call([&](auto cb) { holder.fair_lock(name).async_lock(99, cb); }).ec);

  std::mutex m;
  std::vector<int> order;
  std::vector<std::promise<std::error_code>> done(5);
  for (int i = 0; i < 5; ++i) {
    deadbolt::client& c = i % 2 == 0 ? a : b;
    auto lock = c.fair_lock(name);
    const auto wait = i == 2 ? 400ms : 20000ms;  // the third gives up while the lock is still held
    lock.async_try_lock(i + 1, wait, 0ms, [&, lock, i](std::error_code ec, bool ok) mutable {
      if (ec || !ok) return done[i].set_value(ec ? ec : make_error_code(errc::timed_out));
      {
        std::lock_guard<std::mutex> guard(m);
        order.push_back(i + 1);
      }
      lock.async_unlock(i + 1, [&, i](std::error_code uec) { done[i].set_value(uec); });
    });
    wait_for_queue(redis, name, i + 1);
  }
  // The third's wait runs out: it leaves both the queue and the timeout set.
  auto third = done[2].get_future();
  REQUIRE(third.wait_for(10s) == std::future_status::ready);
  CHECK(third.get() == errc::timed_out);
  CHECK(redis.cli("llen " + queue_key(name)) == "4");
  CHECK(redis.cli("zcard " + timeout_key(name)) == "4");
  CHECK(redis.cli("lrange " + queue_key(name) + " 0 -1").find(a.id() + ":3") == std::string::npos);

  REQUIRE_FALSE(call([&](auto cb) { holder.fair_lock(name).async_unlock(99, cb); }).ec);
  for (int i : {0, 1, 3, 4}) {
    auto f = done[i].get_future();
    REQUIRE(f.wait_for(10s) == std::future_status::ready);
    CHECK_FALSE(f.get());
  }
  CHECK(order == std::vector<int>{1, 2, 4, 5});
  CHECK(redis.cli("exists " + name) == "0");
  CHECK(redis.cli("exists " + queue_key(name)) == "0");
  CHECK(redis.cli("exists " + timeout_key(name)) == "0");
}

TEST_CASE("fair lock: a waiter keeps its place while the queue never empties (the scripts, a given clock)") {
  // Short holds, one after another, and a new waiter behind each: the queue is never empty. Each
  // waiter's entry must outlast its turn: the head in line when the lock is released takes it.
  // (Redisson's arithmetic moves everyone's deadline down one waiter timeout per acquisition, so the
  // head's deadline stays where the first waiter's was — the first holder's lease end plus one
  // timeout — and once the clock passes it, a live head is dropped as stale and never woken.)
  deadbolt::test::redis_server redis;
  const std::string name = unique_name("fair-busy-queue");
  const fair_scripts fair(redis, name);
  constexpr long long lease = 300, wait = 1000, step = 100;
  auto owner = [](int i) { return "waiter:" + std::to_string(i); };

  REQUIRE(fair.acquire(owner(0), 0, lease, wait) == "1");
  REQUIRE(fair.acquire(owner(1), 10, lease, wait) != "1");  // in line behind the holder
  REQUIRE(fair.acquire(owner(2), 20, lease, wait) != "1");
  REQUIRE(fair.queued(owner(1)));
  REQUIRE(fair.queued(owner(2)));
  // Until well past the first holder's lease end plus one waiter timeout (1300 ms).
  for (int i = 1; i <= 25; ++i) {
    const long long t = i * step;
    CAPTURE(t);
    CAPTURE(i);
    fair.unlock(owner(i - 1), t);
    fair.acquire(owner(i), t + 1, lease, wait);  // woken by the unlock: the head in line
    CHECK(fair.holds(owner(i)));
    fair.acquire(owner(i + 2), t + 2, lease, wait);  // a new waiter joins behind
    REQUIRE(fair.queued(owner(i + 1)));
  }
}

TEST_CASE("fair lock: waiters are served in arrival order through a queue that never empties") {
  // As the test above, through the client and real time: a holder with a short lease, two waiters in
  // line, and then each waiter, once it has the lock, lets the next one join before it works (about
  // 100 ms) and unlocks: two waiters are always in line. The first holder's lease end plus one waiter
  // timeout (2.3 s) passes after some twenty holds. The waiters share one client (one connection), so
  // their arrival order is the order they were started in. A waiter that fails still lets the next one
  // join, so a failure ends the test with the order seen rather than a hang.
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client first(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("fair-churn");
  constexpr int waiters = 40;
  constexpr auto lease = 300ms, wait = 2000ms, work = 100ms;

  struct run {
    std::vector<int> order;  // owners in the order they got the lock
    int failed = 0;
    std::string failures;  // "owner: why" of each failed waiter
    int finished = 0;
    std::promise<void> done;
  };
  auto r = std::make_shared<run>();
  std::function<void(int)> start;  // on the loop thread only
  start = [&, r](int i) {
    auto lock = c.fair_lock(name);
    lock.async_try_lock(i + 1, wait, lease, [&, r, lock, i](std::error_code ec, bool ok) mutable {
      auto end = [r] {
        if (++r->finished == waiters) r->done.set_value();
      };
      if (ec || !ok) {
        ++r->failed;
        r->failures += std::to_string(i + 1) + ": " + (ec ? ec.message() : "timed out") + "; ";
        if (i + 2 < waiters) start(i + 2);
        return end();
      }
      r->order.push_back(i + 1);
      if (i + 2 < waiters) start(i + 2);
      auto timer = std::make_shared<asio::steady_timer>(io.io, work);
      timer->async_wait([lock, i, timer, end](std::error_code) mutable {
        lock.async_unlock(i + 1, [end](std::error_code) { end(); });
      });
    });
  };
  auto held = first.fair_lock(name);
  REQUIRE(call<bool>([&](auto cb) { held.async_try_lock(99, 0ms, lease, cb); }).value);
  asio::post(io.io, [&] {
    start(0);
    start(1);
  });
  wait_for_queue(redis, name, 2);
  call([&](auto cb) { held.async_unlock(99, cb); });  // (or its lease ran out already)
  auto all = r->done.get_future();
  REQUIRE(all.wait_for(30s) == std::future_status::ready);
  io.drain();
  INFO("failed waiters: ", r->failures);
  CHECK(r->failed == 0);
  std::string granted, arrival;
  for (int owner : r->order) granted += std::to_string(owner) + " ";
  for (int owner = 1; owner <= waiters; ++owner) arrival += std::to_string(owner) + " ";
  CHECK(granted == arrival);
  CHECK(redis.cli("exists " + queue_key(name)) == "0");
  CHECK(redis.cli("exists " + timeout_key(name)) == "0");
}

TEST_CASE("fair lock: a cancelled waiter leaves the queue; stale waiters are cleaned up") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client holder(io.executor(), config_for(redis));
  deadbolt::client c(io.executor(), config_for(redis));
  const std::string name = unique_name("fair-cancel");
  auto held = holder.fair_lock(name);
  REQUIRE_FALSE(call([&](auto cb) { held.async_lock(1, cb); }).ec);

  auto lock = c.fair_lock(name);
  asio::cancellation_signal signal;
  std::promise<std::error_code> done;
  asio::post(io.io, [&] {
    lock.async_lock(2, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { done.set_value(ec); }));
  });
  wait_for_queue(redis, name, 1);
  asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
  auto f = done.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == asio::error::operation_aborted);
  CHECK(redis.cli("exists " + queue_key(name)) == "0");
  CHECK(redis.cli("exists " + timeout_key(name)) == "0");
  REQUIRE_FALSE(call([&](auto cb) { held.async_unlock(1, cb); }).ec);

  // A waiter whose deadline passed (a crashed client) is dropped by the next attempt.
  redis.cli("rpush " + queue_key(name) + " ghost:1");
  redis.cli("zadd " + timeout_key(name) + " 1 ghost:1");
  CHECK(call<bool>([&](auto cb) { lock.async_try_lock(3, cb); }).value);
  CHECK(redis.cli("exists " + queue_key(name)) == "0");
  CHECK(redis.cli("exists " + timeout_key(name)) == "0");
  // Reentrant; force unlock deletes it whoever holds it.
  CHECK(call<bool>([&](auto cb) { lock.async_try_lock(3, cb); }).value);
  CHECK(call<std::int64_t>([&](auto cb) { lock.async_hold_count(3, cb); }).value == 2);
  CHECK(call<bool>([&](auto cb) { held.async_force_unlock(cb); }).value);
  CHECK(redis.cli("exists " + name) == "0");
  CHECK(call([&](auto cb) { lock.async_unlock(3, cb); }).ec != errc::not_owner);  // Redisson: 1 for a lock gone
}

TEST_CASE("fair lock: the blocking API with std::lock_guard and std::unique_lock") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client a(config_for(redis));
  deadbolt::blocking_client b(config_for(redis));
  const std::string name = unique_name("fair-blocking");
  auto la = a.fair_lock(name);
  auto lb = b.fair_lock(name);
  {
    std::lock_guard<deadbolt::blocking_fair_lock> guard(la);
    CHECK(redis.cli("hexists " + name + " " + a.id() + ":" +
                    std::to_string(static_cast<std::int64_t>(deadbolt::port::thread_id()))) == "1");
    std::unique_lock<deadbolt::blocking_fair_lock> other(lb, std::defer_lock);
    CHECK_FALSE(other.try_lock_for(100ms));
    CHECK(redis.cli("exists " + queue_key(name)) == "0");  // it gave up and left
  }
  std::unique_lock<deadbolt::blocking_fair_lock> other(lb, std::defer_lock);
  CHECK(other.try_lock_for(1s));
}
