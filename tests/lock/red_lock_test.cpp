// The red lock (Redisson RedissonRedLock, Redlock) over five real redis-servers: quorum, servers
// down, validity, mutual exclusion, and release on every server after a failure.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <asio/bind_allocator.hpp>

#include "lock/multi_test.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::unique_name;

namespace {
using errors = std::vector<std::error_code>;

int count_holding(const std::vector<deadbolt::test::redis_server>& servers, const std::string& name) {
  int n = 0;
  for (const auto& s : servers) n += s.cli("exists " + name) == "1" ? 1 : 0;
  return n;
}
}  // namespace

TEST_CASE("red lock over five servers: validity reported, all five held, all released") {
  auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() == 5);
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-basic");
  deadbolt::red_lock lock(cs.locks(name, 5));
  CHECK(lock.quorum() == 3);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 500ms, 5s, cb); });
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
  REQUIRE_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(got.value <= 5000ms - 52ms);  // drift: 1% of the lease + 2 ms
  CHECK(got.value >= 5000ms - 52ms - took);
  CHECK(count_holding(servers, name) == 5);
  // Taken for 2 x wait, then PEXPIREd to the lease.
  const int ttl = std::stoi(servers[4].cli("pttl " + name));
  CHECK(ttl > 4000);
  CHECK(ttl <= 5000);

  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK_FALSE(released.ec);
  CHECK(count_holding(servers, name) == 0);
  // Not held at all: not_owner.
  CHECK(call<errors>([&](auto cb) { lock.async_unlock(1, cb); }).ec == errc::not_owner);

  // The watchdog lease: validity from config::watchdog_timeout (30 s).
  auto watched = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(2, cb); });
  REQUIRE_FALSE(watched.ec);
  CHECK(watched.value > 29000ms);
  CHECK(watched.value <= 30000ms - 302ms);
  CHECK_FALSE(call<errors>([&](auto cb) { lock.async_unlock(2, cb); }).ec);
}

TEST_CASE("red lock validity: the majority's, from the members' deadlines; one member lost leaves the rest") {
  auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() == 5);
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-valid");
  deadbolt::red_lock lock(cs.locks(name, 3));
  auto valid_for = [&] { return call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(1, cb); }).value; };
  CHECK(valid_for() == 0ms);  // not held

  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); });
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.value > 0ms);
  const auto valid = valid_for();
  CHECK(valid > 0ms);
  CHECK(valid <= 5000ms - 52ms);  // the lease less its margin (1% + 2 ms)
  CHECK(valid >= got.value - 100ms);

  // One member lost (deleted behind its back, then unlocked): two of three are still a majority.
  auto member = cs.all[0]->lock(name);
  REQUIRE(servers[0].cli("del " + name) == "1");
  CHECK(call([&](auto cb) { member.async_unlock(1, cb); }).ec == errc::not_owner);
  CHECK(valid_for() > 0ms);
  // A second one: no majority any more.
  auto second = cs.all[1]->lock(name);
  CHECK_FALSE(call([&](auto cb) { second.async_unlock(1, cb); }).ec);
  CHECK(valid_for() == 0ms);
  call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
}

TEST_CASE("two red locks contending: the second fails while the first holds") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients first(io, servers);
  deadbolt::test::clients second(io, servers);
  const std::string name = unique_name("red-contend");
  deadbolt::red_lock a(first.locks(name, 5));
  deadbolt::red_lock b(second.locks(name, 5));

  REQUIRE(call<std::chrono::milliseconds>([&](auto cb) { a.async_try_lock(1, 300ms, 10s, cb); }).value > 0ms);
  auto lost = call<std::chrono::milliseconds>([&](auto cb) { b.async_try_lock(1, 300ms, 10s, cb); });
  CHECK_FALSE(lost.ec);  // busy, not broken
  CHECK(lost.value == 0ms);
  for (const auto& s : servers) CHECK(s.cli("hget " + name + " " + first.all[0]->id() + ":1").size() <= 1);
  CHECK(count_holding(servers, name) == 5);  // the loser left the winner's holds alone

  // A minority held by someone else still lets a majority win.
  CHECK_FALSE(call<errors>([&](auto cb) { a.async_unlock(1, cb); }).ec);
  auto blocker0 = first.all[0]->lock(name);
  auto blocker1 = first.all[1]->lock(name);
  REQUIRE(call<bool>([&](auto cb) { blocker0.async_try_lock(7, cb); }).value);
  REQUIRE(call<bool>([&](auto cb) { blocker1.async_try_lock(7, cb); }).value);
  auto won = call<std::chrono::milliseconds>([&](auto cb) { b.async_try_lock(1, 300ms, 10s, cb); });
  CHECK_FALSE(won.ec);
  CHECK(won.value > 0ms);
  auto released = call<errors>([&](auto cb) { b.async_unlock(1, cb); });
  CHECK_FALSE(released.ec);  // the two members it did not get answer not_owner, which is expected
  CHECK(released.value[0] == errc::not_owner);
  CHECK(servers[0].cli("exists " + name) == "1");  // still the blocker's
  CHECK(servers[2].cli("exists " + name) == "0");
  CHECK_FALSE(call([&](auto cb) { blocker0.async_unlock(7, cb); }).ec);
  CHECK_FALSE(call([&](auto cb) { blocker1.async_unlock(7, cb); }).ec);
}

TEST_CASE("red lock with two of five servers down acquires") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-two-down");
  deadbolt::red_lock lock(cs.locks(name, 5));
  deadbolt::test::stopped_servers down;
  down.stop(servers[1]);
  down.stop(servers[3]);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 10s, cb); });
  CHECK(std::chrono::steady_clock::now() - start < 3s);
  CHECK_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(servers[0].cli("exists " + name) == "1");
  CHECK(servers[2].cli("exists " + name) == "1");
  CHECK(servers[4].cli("exists " + name) == "1");

  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK(released.ec);  // the down servers' errors are reported...
  CHECK_FALSE(released.value[0]);
  CHECK(released.value[1]);
  CHECK_FALSE(released.value[4]);
  CHECK(servers[0].cli("exists " + name) == "0");  // ...and the live ones released anyway
  CHECK(servers[2].cli("exists " + name) == "0");
  CHECK(servers[4].cli("exists " + name) == "0");
}

TEST_CASE("red lock with three of five servers down fails and leaves nothing on the live ones") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-three-down");
  deadbolt::red_lock lock(cs.locks(name, 5));
  deadbolt::test::stopped_servers down;
  down.stop(servers[0]);
  down.stop(servers[2]);
  down.stop(servers[4]);

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 500ms, 10s, cb); });
  CHECK(std::chrono::steady_clock::now() - start < 5s);
  CHECK(got.ec == errc::quorum_not_reached);
  CHECK(got.value == 0ms);
  CHECK(servers[1].cli("exists " + name) == "0");
  CHECK(servers[3].cli("exists " + name) == "0");
}

TEST_CASE("blocking red lock: std::unique_lock and the validity") {
  auto servers = deadbolt::test::redis_servers();
  std::vector<std::unique_ptr<deadbolt::blocking_client>> clients;
  std::vector<deadbolt::blocking_lock> members;
  const std::string name = unique_name("red-blocking");
  for (std::size_t i = 0; i < 3; ++i) {
    clients.push_back(std::make_unique<deadbolt::blocking_client>(deadbolt::test::fast_config(servers[i])));
    members.push_back(clients.back()->lock(name));
  }
  deadbolt::blocking_red_lock lock(members);
  CHECK(lock.quorum() == 2);
  {
    std::unique_lock<deadbolt::blocking_red_lock> guard(lock, 500ms);
    REQUIRE(guard.owns_lock());
    CHECK(count_holding(servers, name) == 3);
    std::thread([&] { CHECK_FALSE(lock.try_lock_for(100ms)); }).join();
  }
  CHECK(count_holding(servers, name) == 0);
  std::error_code ec;
  const auto validity = lock.try_lock_for(200ms, 3s, ec);
  CHECK_FALSE(ec);
  CHECK(validity > 2500ms);
  CHECK(validity < 3000ms);
  CHECK(lock.valid_for() > 2000ms);
  CHECK(lock.valid_for() <= 3000ms - 32ms);
  lock.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(lock.valid_for() == 0ms);
  CHECK(count_holding(servers, name) == 0);
}

TEST_CASE("red lock with a paused server: that member times out, the others give the quorum") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-paused");
  deadbolt::red_lock lock(cs.locks(name, 3));
  servers[0].pause();
  struct resume_on_exit {
    const deadbolt::test::redis_server& r;
    ~resume_on_exit() { r.resume(); }
  } guard{servers[0]};

  const auto start = std::chrono::steady_clock::now();
  auto got = call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); });
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK(took < 2s);  // bounded by the member's command_timeout (300 ms), checked once
  CHECK_FALSE(got.ec);
  CHECK(got.value > 0ms);
  CHECK(got.value < 5000ms - std::chrono::duration_cast<std::chrono::milliseconds>(took) + 10ms);
  CHECK(servers[1].cli("exists " + name) == "1");
  CHECK(servers[2].cli("exists " + name) == "1");
  auto released = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK(released.ec);  // the paused member's unlock fails
  CHECK(servers[1].cli("exists " + name) == "0");
  CHECK(servers[2].cli("exists " + name) == "0");
}

namespace {
// Counts what goes through it: the composites must keep their handler in the handler's allocator.
struct allocation_counts {
  std::atomic<int> allocated{0};
  std::atomic<int> freed{0};
};
template <typename T>
struct counting_allocator {
  using value_type = T;
  allocation_counts* counts;
  explicit counting_allocator(allocation_counts& c) : counts(&c) {}
  template <typename U>
  counting_allocator(const counting_allocator<U>& o) : counts(o.counts) {}
  T* allocate(std::size_t n) {
    ++counts->allocated;
    return std::allocator<T>().allocate(n);
  }
  void deallocate(T* p, std::size_t n) {
    ++counts->freed;
    std::allocator<T>().deallocate(p, n);
  }
  template <typename U>
  bool operator==(const counting_allocator<U>& o) const { return counts == o.counts; }
  template <typename U>
  bool operator!=(const counting_allocator<U>& o) const { return counts != o.counts; }
};

struct unlock_seen {
  std::error_code first;
  std::vector<std::error_code> each;
  const std::error_code* buffer = nullptr;  // where the handler found `each`
};

// Unlocks with a handler that takes `each` by reference (so the composite may reuse its buffer).
unlock_seen unlock_by_reference(deadbolt::red_lock& lock, deadbolt::owner_id owner, allocation_counts& counts) {
  std::promise<unlock_seen> seen;
  lock.async_unlock(owner, asio::bind_allocator(counting_allocator<void>(counts),
                                                [&seen](std::error_code ec, const std::vector<std::error_code>& each) {
                                                  seen.set_value(unlock_seen{ec, each, each.data()});
                                                }));
  auto f = seen.get_future();
  REQUIRE(f.wait_for(30s) == std::future_status::ready);
  return f.get();
}
}  // namespace

TEST_CASE("red lock: handlers live in their own allocator; an unlock's result buffer is reused, reset") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  cs.connect();
  const std::string name = unique_name("red-buffers");
  deadbolt::red_lock lock(cs.locks(name, 3));

  allocation_counts acquire_counts;
  auto got = call<std::chrono::milliseconds>([&](auto cb) {
    lock.async_try_lock(1, 0ms, 5s, asio::bind_allocator(counting_allocator<void>(acquire_counts), cb));
  });
  REQUIRE(got.value > 0ms);
  CHECK(acquire_counts.allocated == 1);  // the composite's completion, in the handler's allocator
  CHECK(acquire_counts.freed == 1);      // given back before the handler ran

  allocation_counts unlock_counts;
  const unlock_seen released = unlock_by_reference(lock, 1, unlock_counts);
  CHECK_FALSE(released.first);
  CHECK(released.each == errors(3));
  CHECK(unlock_counts.allocated == 1);
  CHECK(unlock_counts.freed == 1);
  CHECK(count_holding(servers, name) == 0);

  // Nothing held: the next unlock reuses the buffer the last handler left, and says not_owner three times.
  const unlock_seen nothing = unlock_by_reference(lock, 1, unlock_counts);
  CHECK(nothing.first == errc::not_owner);
  CHECK(nothing.each == errors(3, make_error_code(errc::not_owner)));
  CHECK(nothing.buffer == released.buffer);

  // Held again: the reused buffer starts empty, not with the last outcomes.
  REQUIRE(call<std::chrono::milliseconds>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); }).value > 0ms);
  const unlock_seen again = unlock_by_reference(lock, 1, unlock_counts);
  CHECK_FALSE(again.first);
  CHECK(again.each == errors(3));
  CHECK(again.buffer == released.buffer);

  // A five-member composite on the same thread gets five outcomes (the buffer grows), and then the
  // three-member one three again from that bigger buffer.
  deadbolt::red_lock wide(cs.locks(name, 5));
  REQUIRE(call<std::chrono::milliseconds>([&](auto cb) { wide.async_try_lock(1, 0ms, 5s, cb); }).value > 0ms);
  const unlock_seen wide_released = unlock_by_reference(wide, 1, unlock_counts);
  CHECK_FALSE(wide_released.first);
  CHECK(wide_released.each == errors(5));
  auto kept = call<errors>([&](auto cb) { lock.async_unlock(1, cb); });
  CHECK(kept.ec == errc::not_owner);
  CHECK(kept.value == errors(3, make_error_code(errc::not_owner)));
}
