// deadbolt::async_guard (C++20 coroutines): acquires through the async API, releases with co_await
// (reporting a lost lease) or, when dropped while holding, from its destructor, whose outcome goes to
// the on_release handler.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/async_guard.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

#if defined(ASIO_HAS_CO_AWAIT)
namespace async_guard_test {

using namespace std::chrono_literals;
using deadbolt::errc;

// Runs `body` as a coroutine on the test's io thread and waits for it (at most 10 s).
template <typename Body>
void run_coroutine(deadbolt::test::io_thread& io, Body body) {
  std::promise<void> done;
  asio::co_spawn(io.io, std::move(body), [&done](std::exception_ptr) { done.set_value(); });
  REQUIRE(done.get_future().wait_for(10s) == std::future_status::ready);
}

// Outside the coroutines: GCC 12 cannot build a braced list of strings inside one.
std::vector<std::string> del(const std::string& key) { return {"DEL", key}; }

// Polls until the client found `owner`'s lease on `lock` lost (at most 5 s).
asio::awaitable<bool> until_lost(deadbolt::reentrant_lock lock, deadbolt::owner_id owner) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  for (int i = 0; i < 500; ++i) {
    if (co_await lock.async_lease_lost(owner, asio::use_awaitable)) co_return true;
    pause.expires_after(10ms);
    co_await pause.async_wait(asio::use_awaitable);
  }
  co_return false;
}

TEST_CASE("async_guard: holds until co_await async_release; another owner is kept out") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), deadbolt::test::config_for(redis));
  const std::string name = deadbolt::test::unique_name("async-guard");
  bool held = false, other_held = true, still_locked = true;
  std::error_code other_error = errc::protocol_error, released = errc::protocol_error;
  std::uint64_t token = 0;
  run_coroutine(io, [&]() -> asio::awaitable<void> {
    auto guard = co_await deadbolt::async_lock_guard(c.lock(name), deadbolt::new_owner_id());
    held = guard.owns_lock();
    auto other = co_await deadbolt::async_try_lock_guard(c.lock(name), deadbolt::new_owner_id(), 50ms);
    other_held = static_cast<bool>(other);
    other_error = other.error();
    released = co_await guard.async_release();
    still_locked = co_await c.lock(name).async_is_locked(asio::use_awaitable);
    auto fenced = co_await deadbolt::async_lock_guard(c.fenced_lock(name + "-fenced"), deadbolt::new_owner_id());
    token = fenced.token();
    co_await fenced.async_release();
  });
  CHECK(held);
  CHECK_FALSE(other_held);
  CHECK_FALSE(other_error);  // the wait ran out
  CHECK_FALSE(released);
  CHECK_FALSE(still_locked);
  CHECK(token > 0);
  c.shutdown();
}

TEST_CASE("async_guard: a lost lease is reported by async_release and by the destructor's release") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  auto cfg = deadbolt::test::config_for(redis);
  cfg.watchdog_timeout = 300ms;
  deadbolt::client c(io.executor(), cfg);
  const std::string first = deadbolt::test::unique_name("async-guard-lost");
  const std::string second = deadbolt::test::unique_name("async-guard-lost");
  std::error_code released;
  std::promise<std::error_code> from_destructor;
  bool lost_first = false, lost_second = false;
  run_coroutine(io, [&]() -> asio::awaitable<void> {
    const deadbolt::owner_id me = deadbolt::new_owner_id();
    auto guard = co_await deadbolt::async_lock_guard(c.lock(first), me);
    co_await c.async_command(del(first), asio::use_awaitable);
    lost_first = co_await until_lost(c.lock(first), me);
    released = co_await guard.async_release();
    {
      auto dropped = co_await deadbolt::async_lock_guard(c.lock(second), me);
      dropped.on_release([&from_destructor](std::error_code ec) { from_destructor.set_value(ec); });
      co_await c.async_command(del(second), asio::use_awaitable);
      lost_second = co_await until_lost(c.lock(second), me);
    }  // released by the destructor
  });
  CHECK(lost_first);
  CHECK(released == errc::lease_lost);
  CHECK(lost_second);
  auto f = from_destructor.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK(f.get() == errc::lease_lost);
  c.shutdown();
}

TEST_CASE("async_guard: a coroutine that ends early still releases the lock") {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), deadbolt::test::config_for(redis));
  const std::string name = deadbolt::test::unique_name("async-guard-early");
  std::promise<std::error_code> from_destructor;
  run_coroutine(io, [&]() -> asio::awaitable<void> {
    auto guard = co_await deadbolt::async_lock_guard(c.lock(name), deadbolt::new_owner_id());
    guard.on_release([&from_destructor](std::error_code ec) { from_destructor.set_value(ec); });
    co_return;  // without releasing
  });
  auto f = from_destructor.get_future();
  REQUIRE(f.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(f.get());
  CHECK(redis.cli("exists " + name) == "0");
  c.shutdown();
}

}  // namespace async_guard_test
#endif
