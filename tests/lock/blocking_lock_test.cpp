// The blocking API: standard lock adaptors work, the owner is the calling thread.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <limits>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;

using deadbolt::test::config_for;
using deadbolt::test::unique_name;

TEST_CASE("std::lock_guard and std::unique_lock work, reentrant per thread") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(config_for(redis));
  REQUIRE_FALSE(client.connect());
  auto lock = client.lock(unique_name("guard"));
  std::error_code ec;
  {
    std::lock_guard<deadbolt::blocking_lock> outer(lock);
    {
      std::unique_lock<deadbolt::blocking_lock> inner(lock);  // same thread: re-enters
      CHECK(lock.hold_count(ec) == 2);
    }
    CHECK(lock.hold_count(ec) == 1);
    // Another thread is another owner.
    bool other_got_it = true;
    std::thread([&] { other_got_it = lock.try_lock(); }).join();
    CHECK_FALSE(other_got_it);
  }
  CHECK_FALSE(lock.is_locked(ec));
  CHECK_FALSE(ec);
}

TEST_CASE("try_lock_for and try_lock_until time out while another thread holds the lock") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(config_for(redis));
  auto lock = client.lock(unique_name("timed"));
  lock.lock();
  std::thread([&] {
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(lock.try_lock_for(150ms));
    CHECK(std::chrono::steady_clock::now() - start >= 140ms);
    CHECK_FALSE(lock.try_lock_until(std::chrono::steady_clock::now() + 100ms));
    std::unique_lock<deadbolt::blocking_lock> attempt(lock, std::try_to_lock);
    CHECK_FALSE(attempt.owns_lock());
  }).join();
  lock.unlock();
  std::thread([&] {
    std::unique_lock<deadbolt::blocking_lock> attempt(lock, 1s);
    CHECK(attempt.owns_lock());
  }).join();
}

TEST_CASE("unlock by a thread that holds nothing reports not_owner and never throws") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(config_for(redis));
  auto lock = client.lock(unique_name("notowner"));
  std::error_code ec;
  lock.unlock(ec);
  CHECK(ec == errc::not_owner);
  lock.unlock();  // no throw
}

TEST_CASE("threads of two clients never overlap and lose no update") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client a(config_for(redis));
  deadbolt::blocking_client b(config_for(redis));
  const std::string name = unique_name("counter");
  // Read-then-write (not an atomic increment): only the distributed lock keeps updates from being lost.
  // Atomic loads and stores so that ThreadSanitizer, which cannot see ordering through Redis, stays quiet.
  std::atomic<int> counter{0};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  constexpr int per_thread = 50;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto lock = (t % 2 == 0 ? a : b).lock(name);
      for (int i = 0; i < per_thread; ++i) {
        std::lock_guard<deadbolt::blocking_lock> guard(lock);
        if (inside.fetch_add(1) != 0) overlapped = true;
        const int seen = counter.load(std::memory_order_relaxed);
        std::this_thread::yield();
        counter.store(seen + 1, std::memory_order_relaxed);
        inside.fetch_sub(1);
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_FALSE(overlapped.load());
  CHECK(counter.load() == 4 * per_thread);
}

TEST_CASE("blocking fenced lock: tokens strictly increase across threads of two clients") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client a(config_for(redis));
  deadbolt::blocking_client b(config_for(redis));
  const std::string name = unique_name("blocking-fenced");
  std::atomic<std::uint64_t> last{0};
  std::atomic<bool> not_increasing{false};
  std::atomic<int> inside{0};
  std::atomic<bool> overlapped{false};
  constexpr int per_thread = 20;
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      auto lock = (t % 2 == 0 ? a : b).fenced_lock(name);
      for (int i = 0; i < per_thread; ++i) {
        const std::uint64_t token = lock.lock();
        if (inside.fetch_add(1) != 0) overlapped = true;
        if (token <= last.load()) not_increasing = true;
        last = token;
        inside.fetch_sub(1);
        lock.unlock();
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK_FALSE(overlapped.load());
  CHECK_FALSE(not_increasing.load());
  CHECK(last.load() == 4 * per_thread);
  std::error_code ec;
  CHECK(a.fenced_lock(name).token(ec) == 4 * per_thread);
  CHECK_FALSE(ec);
  CHECK(redis.cli("get redisson_lock_token:{" + name + "}") == std::to_string(4 * per_thread));
}

TEST_CASE("blocking fenced lock: std::lock_guard, try_lock forms and reentry") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client client(config_for(redis));
  auto lock = client.fenced_lock(unique_name("blocking-fenced-guard"));
  std::error_code ec;
  CHECK(lock.token(ec) == 0);
  CHECK_FALSE(ec);
  {
    std::lock_guard<deadbolt::blocking_fenced_lock> guard(lock);
    CHECK(lock.token(ec) == 1);
    // Reentry takes a new token.
    const auto again = lock.try_lock();
    REQUIRE(again);
    CHECK(*again == 2);
    CHECK(lock.hold_count(ec) == 2);
    lock.unlock();
    // Another thread is another owner: no token.
    std::optional<std::uint64_t> other{7};
    std::thread([&] { other = lock.try_lock_for(100ms); }).join();
    CHECK_FALSE(other);
    std::thread([&] { other = lock.try_lock_until(std::chrono::steady_clock::now() + 50ms); }).join();
    CHECK_FALSE(other);
    std::thread([&] {
      std::error_code e;
      other = lock.try_lock(e);
      CHECK_FALSE(e);
    }).join();
    CHECK_FALSE(other);
  }
  CHECK_FALSE(lock.is_locked(ec));
  {
    std::unique_lock<deadbolt::blocking_fenced_lock> maybe(lock, std::try_to_lock);
    CHECK(maybe.owns_lock());
  }
  const std::uint64_t t = lock.lock(ec);
  CHECK_FALSE(ec);
  CHECK(t == 4);
  lock.unlock(ec);
  CHECK_FALSE(ec);
  lock.unlock(ec);  // holds nothing now
  CHECK(ec == errc::not_owner);
  lock.unlock();  // never throws
}

namespace {
/// Runs `f` on its own thread; false if it has not returned within `limit` (the thread is left to
/// finish; the test fails either way).
template <typename F>
bool returns_within(F f, std::chrono::seconds limit) {
  auto task = std::make_shared<std::packaged_task<void()>>(std::move(f));
  auto done = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  return done.wait_for(limit) == std::future_status::ready;
}
}  // namespace

TEST_CASE("a blocking call on the client's own loop thread fails at once with would_deadlock") {
  deadbolt::test::redis_server redis;
  auto cfg = config_for(redis);
  // Renewed every 500 ms. A 450 ms lease once lapsed on a loaded CI machine under qemu (riscv64)
  // between the acquire and the redis-cli that takes the lock away, so that DEL found nothing.
  cfg.watchdog_timeout = 1500ms;
  deadbolt::blocking_client bc(cfg);
  const std::string name = unique_name("loop-thread");
  auto lock = bc.lock(name);
  std::promise<std::error_code> inside;
  bc.on_lease_lost([&](std::string_view, std::int64_t) {
    std::error_code ec;
    lock.is_locked(ec);  // on the loop thread: it would wait for itself
    std::error_code ec2;
    lock.try_lock(ec2);
    inside.set_value(ec == ec2 ? ec : std::error_code(deadbolt::errc::protocol_error));
  });
  lock.lock();
  REQUIRE(redis.cli("del " + name) == "1");  // the next renewal finds it gone
  auto f = inside.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == errc::would_deadlock);
  // The client still works for everyone else.
  std::error_code ec;
  auto other = bc.lock(name + "-other");
  CHECK(other.try_lock(ec));
  CHECK_FALSE(ec);
  other.unlock(ec);
  CHECK_FALSE(ec);
}

TEST_CASE("a non-positive wait is one attempt in every blocking overload") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client holder(config_for(redis));
  deadbolt::blocking_client bc(config_for(redis));
  const std::string name = unique_name("negative-wait");
  auto held = holder.lock(name);
  held.lock();
  auto sem = bc.semaphore(name + "-sem");
  auto exp = bc.expirable_semaphore(name + "-exp");
  auto latch = bc.count_down_latch(name + "-latch");
  std::error_code ec;
  REQUIRE(sem.try_set_permits(0, ec));
  REQUIRE(exp.try_set_permits(0, ec));
  REQUIRE(latch.try_set_count(1, ec));
  auto lock = bc.lock(name);
  auto fenced = bc.fenced_lock(name);
  CHECK(returns_within([&] { CHECK_FALSE(lock.try_lock_for(-1s)); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(lock.try_lock_for(-1s, 0ms, ec)); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(lock.try_lock_until(std::chrono::steady_clock::now() - 1s)); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(fenced.try_lock_for(-1s, 0ms, ec).has_value()); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(sem.try_acquire(1, -1s, ec)); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(sem.try_acquire_for(1, -1s)); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(exp.try_acquire(-1s, 1s, ec).has_value()); }, 10s));
  CHECK(returns_within([&] { CHECK_FALSE(latch.await_for(-1s, ec)); }, 10s));
  held.unlock();
}

TEST_CASE("a wait too long for the clock waits without a deadline") {
  deadbolt::test::redis_server redis;
  deadbolt::blocking_client holder(config_for(redis));
  deadbolt::blocking_client bc(config_for(redis));
  const std::string name = unique_name("huge-wait");
  std::error_code ec;
  auto held = holder.lock(name);
  REQUIRE(held.try_lock_for(0ms, 300ms, ec));  // a fixed lease: the waiter gets it when it lapses
  auto lock = bc.lock(name);
  // returns_within runs its work on another thread, which is the owner there.
  CHECK(returns_within([&] {
    CHECK(lock.try_lock_for(std::chrono::hours::max()));
    lock.unlock();
  }, 10s));
  REQUIRE(held.try_lock_for(0ms, 300ms, ec));
  CHECK(returns_within([&] {
    CHECK(lock.try_lock_until(std::chrono::system_clock::time_point::max()));
    lock.unlock();
  }, 10s));
  CHECK(deadbolt::detail::wait_ms(std::chrono::hours::max()) == std::numeric_limits<std::int64_t>::max());
  CHECK(deadbolt::detail::wait_ms(std::chrono::hours::min()) == 0);
  CHECK(deadbolt::detail::wait_ms(std::chrono::microseconds(1)) == 1);
  CHECK(deadbolt::detail::wait_ms(std::chrono::duration<double>(-0.5)) == 0);
}

TEST_CASE("a handle that outlives its blocking_client answers shutting_down") {
  deadbolt::test::redis_server redis;
  auto client = std::make_unique<deadbolt::blocking_client>(config_for(redis));
  const std::string name = unique_name("orphan");
  auto lock = client->lock(name);
  auto fenced = client->fenced_lock(name);
  auto sem = client->semaphore(name + "-sem");
  auto latch = client->count_down_latch(name + "-latch");
  deadbolt::blocking_multi_lock multi({client->lock(name + "-a"), client->lock(name + "-b")});
  std::error_code ec;
  REQUIRE(lock.try_lock(ec));
  lock.unlock(ec);
  client.reset();
  CHECK(returns_within([&] {
    std::error_code e;
    lock.lock(e);
    CHECK(e == errc::shutting_down);
    CHECK_FALSE(lock.try_lock(e));
    CHECK(e == errc::shutting_down);
    lock.is_locked(e);
    CHECK(e == errc::shutting_down);
    lock.unlock(e);
    CHECK(e == errc::shutting_down);
    fenced.lock(e);
    CHECK(e == errc::shutting_down);
    sem.acquire(1, e);
    CHECK(e == errc::shutting_down);
    latch.await(e);
    CHECK(e == errc::shutting_down);
    CHECK_FALSE(multi.try_lock(e));
    CHECK(e == errc::shutting_down);
    multi.unlock(e);
    CHECK(e == errc::shutting_down);
  }, 10s));
}

TEST_CASE("a lease-lost handler that holds handles does not keep a closed client alive") {
  deadbolt::test::redis_server redis;
  auto alive = std::make_shared<int>(0);
  {
    deadbolt::blocking_client blocking(config_for(redis));
    auto lock = blocking.lock(unique_name("handler-cycle"));
    blocking.on_lease_lost([alive, lock](std::string_view, deadbolt::owner_id) {});
    deadbolt::test::io_thread io;
    {
      deadbolt::client async(io.executor(), config_for(redis));
      auto async_lock = async.lock(unique_name("handler-cycle-async"));
      async.on_lease_lost([alive, async_lock](std::string_view, deadbolt::owner_id) {});
    }
    io.drain();
  }
  // Both handlers were dropped at shutdown: nothing else holds `alive` (a cycle client → handler →
  // handle → client leaked both clients, and the blocking one its io_context).
  CHECK(alive.use_count() == 1);
}

// Each kind is its own type: a composite takes only what it can lock correctly (a fair lock or a
// read half in a blocking_multi_lock used to compile and be taken with the reentrant script).
static_assert(!std::is_convertible_v<deadbolt::blocking_fair_lock, deadbolt::blocking_lock>);
static_assert(!std::is_convertible_v<deadbolt::blocking_read_lock, deadbolt::blocking_lock>);
static_assert(!std::is_convertible_v<deadbolt::blocking_write_lock, deadbolt::blocking_lock>);
static_assert(!std::is_constructible_v<deadbolt::blocking_multi_lock, std::vector<deadbolt::blocking_fair_lock>>);
static_assert(!std::is_constructible_v<deadbolt::blocking_red_lock, std::vector<deadbolt::blocking_read_lock>>);
static_assert(std::is_constructible_v<deadbolt::blocking_multi_lock, std::vector<deadbolt::blocking_lock>>);
