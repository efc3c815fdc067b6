// The multi lock (Redisson RedissonMultiLock) against real redis-servers: all or nothing, across
// clients, servers and io_contexts; unlock reports every member; the blocking API.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "lock/multi_test.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
using deadbolt::test::none;
using deadbolt::test::unique_name;

namespace {
using errors = std::vector<std::error_code>;
}

TEST_CASE("multi lock across two clients on different servers and io_contexts") {
  auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() >= 2);
  deadbolt::test::io_thread io1;
  deadbolt::test::io_thread io2;
  deadbolt::client a(io1.executor(), deadbolt::test::fast_config(servers[0]));
  deadbolt::client b(io2.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string n1 = unique_name("multi-a"), n2 = unique_name("multi-b");
  deadbolt::multi_lock lock({a.lock(n1), b.lock(n2)});
  CHECK(lock.size() == 2);

  auto got = call<bool>([&](auto cb) { lock.async_try_lock(3, 500ms, 0ms, cb); });
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.value);
  CHECK(servers[0].cli("hget " + n1 + " " + a.id() + ":3") == "1");
  CHECK(servers[1].cli("hget " + n2 + " " + b.id() + ":3") == "1");
  CHECK(std::stoi(servers[0].cli("pttl " + n1)) > 20000);  // watchdog lease

  auto released = call<errors>([&](auto cb) { lock.async_unlock(3, cb); });
  CHECK_FALSE(released.ec);
  REQUIRE(released.value.size() == 2);
  CHECK_FALSE(released.value[0]);
  CHECK_FALSE(released.value[1]);
  CHECK(servers[0].cli("exists " + n1) == "0");
  CHECK(servers[1].cli("exists " + n2) == "0");

  // async_lock, with a lease: each member ends up with the lease as its TTL.
  REQUIRE_FALSE(call([&](auto cb) { lock.async_lock(3, 4s, cb); }).ec);
  const int ttl = std::stoi(servers[1].cli("pttl " + n2));
  CHECK(ttl > 3000);
  CHECK(ttl <= 4000);
  CHECK_FALSE(call<errors>([&](auto cb) { lock.async_unlock(3, cb); }).ec);
}

TEST_CASE("multi lock validity: the least of its members'; zero once one is lost") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  const std::string name = unique_name("multi-valid");
  deadbolt::multi_lock lock(cs.locks(name, 2));
  auto valid_for = [&] { return call<std::chrono::milliseconds>([&](auto cb) { lock.async_valid_for(4, cb); }).value; };
  CHECK(valid_for() == 0ms);
  auto got = call<bool>([&](auto cb) { lock.async_try_lock(4, 500ms, 3s, cb); });  // taken for 1 s, then set to 3 s
  REQUIRE_FALSE(got.ec);
  REQUIRE(got.value);
  const auto valid = valid_for();
  CHECK(valid > 1000ms);  // the members' deadlines follow the lease they were set to
  CHECK(valid <= 3000ms - 32ms);
  auto first = cs.all[0]->lock(name);
  // A member's own validity, asked a moment later: about the composite's (the least) or more.
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { first.async_valid_for(4, cb); }).value >= valid - 100ms);
  CHECK_FALSE(call([&](auto cb) { first.async_unlock(4, cb); }).ec);  // one member gone: the composite is not held
  CHECK(valid_for() == 0ms);
  call<errors>([&](auto cb) { lock.async_unlock(4, cb); });
}

TEST_CASE("multi lock: one member held elsewhere, try_lock fails and releases what it took") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  deadbolt::client other(io.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-partial");
  deadbolt::multi_lock lock(cs.locks(name, 3));
  auto held_elsewhere = other.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { held_elsewhere.async_lock(9, cb); }).ec);

  auto no_wait = call<bool>([&](auto cb) { lock.async_try_lock(1, cb); });
  CHECK_FALSE(no_wait.ec);
  CHECK_FALSE(no_wait.value);
  CHECK(servers[0].cli("exists " + name) == "0");  // member 0 was taken, then released
  CHECK(servers[2].cli("exists " + name) == "0");  // member 2 never tried

  const auto start = std::chrono::steady_clock::now();
  auto waited = call<bool>([&](auto cb) { lock.async_try_lock(1, 300ms, 2s, cb); });
  const auto took = std::chrono::steady_clock::now() - start;
  CHECK_FALSE(waited.ec);
  CHECK_FALSE(waited.value);
  CHECK(took >= 280ms);
  CHECK(took < 2s);
  CHECK(servers[0].cli("exists " + name) == "0");
  CHECK(servers[2].cli("exists " + name) == "0");
  CHECK(servers[1].cli("hget " + name + " " + other.id() + ":9") == "1");

  // Released by its holder within the wait: the multi lock gets all three.
  std::thread releaser([&] {
    std::this_thread::sleep_for(100ms);
    CHECK_FALSE(call([&](auto cb) { held_elsewhere.async_unlock(9, cb); }).ec);
  });
  auto later = call<bool>([&](auto cb) { lock.async_try_lock(1, 2s, 0ms, cb); });
  releaser.join();
  CHECK_FALSE(later.ec);
  CHECK(later.value);
  CHECK_FALSE(call<errors>([&](auto cb) { lock.async_unlock(1, cb); }).ec);
}

TEST_CASE("multi lock: a member failing with an error fails the attempt with that error") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  const std::string name = unique_name("multi-wrongtype");
  REQUIRE(servers[1].cli("set " + name + " x") == "OK");
  deadbolt::multi_lock lock(cs.locks(name, 3));
  auto got = call<bool>([&](auto cb) { lock.async_try_lock(1, 300ms, 0ms, cb); });
  CHECK(got.ec == errc::wrong_type);
  CHECK_FALSE(got.value);
  CHECK(servers[0].cli("exists " + name) == "0");
  // lock() does not loop on an error no retry can cure.
  CHECK(call([&](auto cb) { lock.async_lock(1, cb); }).ec == errc::wrong_type);
  CHECK(servers[0].cli("exists " + name) == "0");
}

TEST_CASE("multi lock unlock tries every member and reports each error") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  const std::string name = unique_name("multi-unlock");
  deadbolt::multi_lock lock(cs.locks(name, 3));
  REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(4, cb); }).value);
  REQUIRE(servers[1].cli("del " + name) == "1");  // member 1 force-unlocked behind our back

  auto released = call<errors>([&](auto cb) { lock.async_unlock(4, cb); });
  CHECK(released.ec == errc::not_owner);
  REQUIRE(released.value.size() == 3);
  CHECK_FALSE(released.value[0]);
  CHECK(released.value[1] == errc::not_owner);
  CHECK_FALSE(released.value[2]);
  CHECK(servers[0].cli("exists " + name) == "0");
  CHECK(servers[2].cli("exists " + name) == "0");
}

TEST_CASE("multi lock: cancelling a waiting lock() releases what it took") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  deadbolt::client other(io.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-cancel");
  deadbolt::multi_lock lock(cs.locks(name, 2));
  auto blocker = other.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { blocker.async_lock(9, cb); }).ec);

  asio::cancellation_signal signal;
  auto result = std::make_shared<std::promise<std::error_code>>();
  auto future = result->get_future();
  lock.async_lock(1, asio::bind_cancellation_slot(signal.slot(), [result](std::error_code ec) {
                    result->set_value(ec);
                  }));
  std::this_thread::sleep_for(150ms);  // let it take member 0 and wait on member 1
  asio::post(lock.get_executor(), [&] { signal.emit(asio::cancellation_type::terminal); });
  REQUIRE(future.wait_for(5s) == std::future_status::ready);
  CHECK(future.get() == asio::error::operation_aborted);
  CHECK(servers[0].cli("exists " + name) == "0");
  CHECK_FALSE(call([&](auto cb) { blocker.async_unlock(9, cb); }).ec);
}

TEST_CASE("blocking multi lock: std::lock_guard and std::unique_lock work") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::blocking_client a(deadbolt::test::fast_config(servers[0]));
  deadbolt::blocking_client b(deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-blocking");
  deadbolt::blocking_multi_lock lock({a.lock(name), b.lock(name)});
  {
    std::lock_guard<deadbolt::blocking_multi_lock> guard(lock);
    CHECK(servers[0].cli("exists " + name) == "1");
    CHECK(servers[1].cli("exists " + name) == "1");
    std::thread([&] {  // another thread is another owner
      const auto start = std::chrono::steady_clock::now();
      std::unique_lock<deadbolt::blocking_multi_lock> attempt(lock, 200ms);
      CHECK_FALSE(attempt.owns_lock());
      CHECK(std::chrono::steady_clock::now() - start >= 190ms);
      CHECK_FALSE(lock.try_lock());
    }).join();
  }
  CHECK(servers[0].cli("exists " + name) == "0");
  CHECK(servers[1].cli("exists " + name) == "0");
  std::thread([&] {
    std::unique_lock<deadbolt::blocking_multi_lock> attempt(lock, std::defer_lock);
    CHECK(attempt.try_lock_for(500ms));
    std::error_code ec;
    CHECK(lock.unlock(ec).size() == 2);
    CHECK_FALSE(ec);
    attempt.release();
  }).join();
  CHECK(servers[0].cli("exists " + name) == "0");
}

#if defined(__cpp_exceptions)
TEST_CASE("multi lock and red lock take asio::use_future") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  const std::string name = unique_name("multi-future");
  deadbolt::multi_lock multi(cs.locks(name, 2));
  CHECK(multi.async_try_lock(5, 200ms, 0ms, asio::use_future).get());
  CHECK(multi.async_unlock(5, asio::use_future).get().size() == 2);
  deadbolt::red_lock red(cs.locks(name, 3));
  CHECK(red.async_try_lock(5, 200ms, 2s, asio::use_future).get() > 0ms);
  red.async_lock(5, asio::use_future).get();  // reentrant: a second hold on each member
  CHECK(servers[2].cli("hget " + name + " " + cs.all[2]->id() + ":5") == "2");
  red.async_unlock(5, asio::use_future).get();
  red.async_unlock(5, asio::use_future).get();
  CHECK(servers[0].cli("exists " + name) == "0");
}
#endif

TEST_CASE("an empty multi lock or red lock reports invalid_config") {
  deadbolt::multi_lock multi(std::vector<deadbolt::reentrant_lock>{});
  auto got = call<bool>([&](auto cb) { multi.async_try_lock(1, cb); });
  CHECK(got.ec == errc::invalid_config);
  CHECK_FALSE(got.value);
  deadbolt::red_lock red(std::vector<deadbolt::reentrant_lock>{});
  CHECK(call<std::chrono::milliseconds>([&](auto cb) { red.async_try_lock(1, cb); }).ec == errc::invalid_config);
  CHECK(call<errors>([&](auto cb) { red.async_unlock(1, cb); }).ec == errc::invalid_config);
}

TEST_CASE("a cancelled or failed composite keeps the holds the owner had before") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  deadbolt::client other(io.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-prior");
  const std::string field = cs.all[0]->id() + ":7";
  auto prior = cs.all[0]->lock(name);
  REQUIRE_FALSE(call([&](auto cb) { prior.async_lock(7, cb); }).ec);  // owner 7 holds member 0
  auto blocker = other.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { blocker.async_lock(9, cb); }).ec);  // member 1 is taken

  auto cancelled_after = [&](auto& composite, std::chrono::milliseconds delay) {
    asio::cancellation_signal signal;
    std::promise<std::error_code> result;
    asio::post(io.io, [&] {
      composite.async_lock(7, asio::bind_cancellation_slot(signal.slot(), [&](std::error_code ec) { result.set_value(ec); }));
    });
    std::this_thread::sleep_for(delay);
    asio::post(io.io, [&] { signal.emit(asio::cancellation_type::terminal); });
    auto f = result.get_future();
    REQUIRE(f.wait_for(5s) == std::future_status::ready);
    return f.get();
  };
  SUBCASE("multi lock, cancelled while it waits") {
    deadbolt::multi_lock multi(cs.locks(name, 2));
    CHECK(cancelled_after(multi, 150ms) == asio::error::operation_aborted);
  }
  SUBCASE("red lock, cancelled while it waits") {
    deadbolt::red_lock red({cs.all[0]->lock(name), cs.all[1]->lock(name), cs.all[2]->lock(name)});
    REQUIRE(servers[2].cli("hset " + name + " someone:1 1") == "1");  // no quorum without member 1
    CHECK(cancelled_after(red, 150ms) == asio::error::operation_aborted);
    servers[2].cli("del " + name);
  }
  SUBCASE("multi lock, cancelled at once (member 0's attempt in flight), many times") {
    deadbolt::multi_lock multi(cs.locks(name, 2));
    for (int i = 0; i < 30; ++i) {
      const auto ec = cancelled_after(multi, std::chrono::milliseconds(i % 3));
      CHECK(ec == asio::error::operation_aborted);
      REQUIRE(servers[0].cli("hget " + name + " " + field) == "1");
    }
  }
  SUBCASE("multi lock whose wait runs out") {
    deadbolt::multi_lock multi(cs.locks(name, 2));
    CHECK_FALSE(call<bool>([&](auto cb) { multi.async_try_lock(7, 300ms, 0ms, cb); }).value);
  }
  CHECK(servers[0].cli("hget " + name + " " + field) == "1");  // still exactly the owner's one hold
  CHECK(call<std::int64_t>([&](auto cb) { prior.async_hold_count(7, cb); }).value == 1);
  CHECK_FALSE(call([&](auto cb) { prior.async_unlock(7, cb); }).ec);
  CHECK(servers[0].cli("exists " + name) == "0");
  CHECK_FALSE(call([&](auto cb) { blocker.async_unlock(9, cb); }).ec);
}

TEST_CASE("cancelling a composite whose members live on different event loops") {
  auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() >= 3);
  deadbolt::test::io_thread io1, io2, io3;
  deadbolt::client a(io1.executor(), deadbolt::test::fast_config(servers[0]));
  deadbolt::client b(io2.executor(), deadbolt::test::fast_config(servers[1]));
  deadbolt::client c(io3.executor(), deadbolt::test::fast_config(servers[2]));
  deadbolt::client other(io1.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-loops");
  auto blocker = other.lock(name);
  REQUIRE_FALSE(call([&](auto cb) { blocker.async_lock(9, cb); }).ec);
  for (int kind = 0; kind < 2; ++kind) {
    std::vector<deadbolt::reentrant_lock> members{a.lock(name), b.lock(name), c.lock(name)};
    asio::cancellation_signal signal;
    std::promise<std::error_code> result;
    auto done = [&](std::error_code ec, auto&&...) { result.set_value(ec); };
    // Started and cancelled from a fourth thread (the test's), as an application would.
    if (kind == 0) {
      deadbolt::multi_lock multi(members);
      multi.async_try_lock(1, 5s, 0ms, asio::bind_cancellation_slot(signal.slot(), done));
      std::this_thread::sleep_for(150ms);
      asio::post(multi.get_executor(), [&] { signal.emit(asio::cancellation_type::terminal); });
      auto f = result.get_future();
      REQUIRE(f.wait_for(5s) == std::future_status::ready);
      CHECK(f.get() == asio::error::operation_aborted);
    } else {
      REQUIRE(servers[2].cli("hset " + name + " someone:1 1") == "1");
      deadbolt::red_lock red(members);
      red.async_try_lock(1, 5s, 0ms, asio::bind_cancellation_slot(signal.slot(), done));
      std::this_thread::sleep_for(150ms);
      asio::post(red.get_executor(), [&] { signal.emit(asio::cancellation_type::terminal); });
      auto f = result.get_future();
      REQUIRE(f.wait_for(5s) == std::future_status::ready);
      CHECK(f.get() == asio::error::operation_aborted);
      servers[2].cli("del " + name);
    }
    CHECK(servers[0].cli("exists " + name) == "0");
  }
  CHECK_FALSE(call([&](auto cb) { blocker.async_unlock(9, cb); }).ec);
}

TEST_CASE("a composite waiting milliseconds::max() waits") {
  auto servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread io;
  deadbolt::test::clients cs(io, servers);
  deadbolt::client other(io.executor(), deadbolt::test::fast_config(servers[1]));
  const std::string name = unique_name("multi-forever");
  auto blocker = other.lock(name);
  REQUIRE(call<bool>([&](auto cb) { blocker.async_try_lock(9, 0ms, 400ms, cb); }).value);
  deadbolt::multi_lock multi(cs.locks(name, 2));
  CHECK(call<bool>([&](auto cb) { multi.async_try_lock(1, std::chrono::milliseconds::max(), 0ms, cb); }).value);
  CHECK_FALSE(call<errors>([&](auto cb) { multi.async_unlock(1, cb); }).ec);
}

namespace {

/// Three clients, each on its own io_context and thread (server i for client i), and a blocker
/// client per server, so a member can be held by someone else.
struct three_loops {
  std::vector<deadbolt::test::redis_server> servers = deadbolt::test::redis_servers();
  deadbolt::test::io_thread loops[3];
  deadbolt::test::io_thread blocker_loop;
  std::vector<std::unique_ptr<deadbolt::client>> members;
  deadbolt::test::clients blockers{blocker_loop, servers};
  std::string name;

  explicit three_loops(const char* base) : name(unique_name(base)) {
    for (std::size_t i = 0; i < 3; ++i) {
      const auto cfg = deadbolt::test::fast_config(servers[i]);
      members.push_back(std::make_unique<deadbolt::client>(loops[i].executor(), cfg));
    }
  }
  ~three_loops() { members.clear(); }  // shut down before their loops stop

  std::vector<deadbolt::reentrant_lock> locks() const {
    return {members[0]->lock(name), members[1]->lock(name), members[2]->lock(name)};
  }
  void block(std::size_t i) {
    auto l = blockers.all[i]->lock(name);
    REQUIRE(call<bool>([&](auto cb) { l.async_try_lock(9, cb); }).value);
  }
  void check_nothing_held(deadbolt::owner_id owner) const {
    for (std::size_t i = 0; i < 3; ++i) {
      CHECK(servers[i].cli("hexists " + name + " " + members[i]->id() + ":" + std::to_string(owner)) == "0");
    }
  }
  void release_blocker(std::size_t i) {
    auto l = blockers.all[i]->lock(name);
    CHECK(servers[i].cli("hget " + name + " " + blockers.all[i]->id() + ":9") == "1");
    CHECK_FALSE(call([&](auto cb) { l.async_unlock(9, cb); }).ec);
  }
};

}  // namespace

TEST_CASE("multi lock and red lock run on a strand of their first member's executor") {
  three_loops s("multi-loops-executor");
  auto thread_of = [](const asio::any_io_executor& ex) {
    std::promise<std::thread::id> id;
    asio::post(ex, [&] { id.set_value(std::this_thread::get_id()); });
    return id.get_future().get();
  };
  deadbolt::multi_lock multi(s.locks());
  deadbolt::red_lock red(s.locks());
  CHECK(thread_of(multi.get_executor()) == s.loops[0].thread.get_id());
  CHECK(thread_of(red.get_executor()) == s.loops[0].thread.get_id());
}
