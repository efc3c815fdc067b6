// Lock+unlock pairs in steady state do not touch the heap: one reentrant lock, and a red lock over
// three servers. bench/alloc_counter.cpp, linked in, replaces malloc & co. for this executable. The
// benchmarks count the same at speed (lock_uncontended, redlock3); this test catches a regression
// without one: a red lock's release once allocated 1.5 times a pair, when its three connections each
// posted a flush in the same turn and outgrew Asio's two-block cache.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include <asio/io_context.hpp>
#include <asio/steady_timer.hpp>

#include "alloc_counter.hpp"
#include "deadbolt/deadbolt.hpp"
#include "lock/multi_test.hpp"

using namespace std::chrono_literals;

namespace {

constexpr long warm_pairs = 200;
constexpr long counted_pairs = 1000;

// Counts allocations over the pairs after the warm ones; the chain reports each pair's end here.
struct pair_count {
  explicit pair_count(asio::io_context& context) : io(context) {}
  asio::io_context& io;  // stopped after the last pair: the clients' reads keep it busy
  long done = 0;
  std::size_t allocations = 0;
  std::error_code error;

  /// Whether to start another pair.
  bool pair_ended(std::error_code ec) {
    if (ec) {
      if (done >= warm_pairs) deadbolt::bench::stop_counting_allocations();
      error = ec;
      io.stop();
      return false;
    }
    if (++done == warm_pairs) deadbolt::bench::start_counting_allocations();
    if (done < warm_pairs + counted_pairs) return true;
    allocations = deadbolt::bench::stop_counting_allocations();
    io.stop();
    return false;
  }
};

const std::error_code not_acquired = std::make_error_code(std::errc::device_or_resource_busy);

void reentrant_pairs(deadbolt::reentrant_lock& lock, pair_count& count) {
  lock.async_try_lock(1, 0ms, 30s, [&lock, &count](std::error_code ec, bool got) {
    if (!ec && !got) ec = not_acquired;
    if (ec) return void(count.pair_ended(ec));
    lock.async_unlock(1, [&lock, &count](std::error_code ec) {
      if (count.pair_ended(ec)) reentrant_pairs(lock, count);
    });
  });
}

void red_pairs(deadbolt::red_lock& lock, pair_count& count) {
  lock.async_try_lock(1, 0ms, 30s, [&lock, &count](std::error_code ec, std::chrono::milliseconds validity) {
    if (!ec && validity <= 0ms) ec = not_acquired;
    if (ec) return void(count.pair_ended(ec));
    // `each` by reference: the composite keeps its buffer for the next unlock.
    lock.async_unlock(1, [&lock, &count](std::error_code ec, const std::vector<std::error_code>&) {
      if (count.pair_ended(ec)) red_pairs(lock, count);
    });
  });
}

// Runs the loop until a handler stops it, or fails after 120 s. run() and a timer, not run_for(): each
// of run_for's steps starts Asio's per-thread cache afresh, and then every post allocates (in an
// application as much as here).
void run_bounded(asio::io_context& io) {
  bool timed_out = false;
  asio::steady_timer guard(io, 120s);
  guard.async_wait([&](std::error_code ec) {
    if (ec) return;
    timed_out = true;
    io.stop();
  });
  io.restart();
  io.run();
  REQUIRE_FALSE(timed_out);
}

std::vector<std::unique_ptr<deadbolt::client>> connected_clients(asio::io_context& io,
                                                                 const std::vector<deadbolt::test::redis_server>& servers) {
  std::vector<std::unique_ptr<deadbolt::client>> out;
  for (const auto& s : servers) {
    out.push_back(std::make_unique<deadbolt::client>(io.get_executor(), deadbolt::test::config_for(s)));
    std::error_code connected = make_error_code(std::errc::timed_out);
    out.back()->async_connect([&](std::error_code ec) {
      connected = ec;
      io.stop();
    });
    run_bounded(io);
    REQUIRE_FALSE(connected);
  }
  return out;
}

// Runs the pairs `start_pairs(count)` chains and checks that they all ran, and none allocated.
template <typename StartPairs>
void check_pairs_do_not_allocate(asio::io_context& io, StartPairs start_pairs) {
  pair_count count(io);
  start_pairs(count);
  run_bounded(io);
  REQUIRE_FALSE(count.error);
  REQUIRE(count.done == warm_pairs + counted_pairs);
  CHECK(count.allocations == 0);
}

}  // namespace

TEST_CASE("steady-state lock+unlock pairs of a reentrant lock do not allocate") {
  const auto servers = deadbolt::test::redis_servers();
  asio::io_context io;
  auto clients = connected_clients(io, servers);
  deadbolt::reentrant_lock lock = clients[0]->lock(deadbolt::test::unique_name("steady-reentrant"));
  check_pairs_do_not_allocate(io, [&](pair_count& count) { reentrant_pairs(lock, count); });
}

TEST_CASE("steady-state lock+unlock pairs of a red lock over three servers do not allocate") {
  const auto servers = deadbolt::test::redis_servers();
  REQUIRE(servers.size() == 3);
  asio::io_context io;
  auto clients = connected_clients(io, servers);
  const std::string name = deadbolt::test::unique_name("steady-red");
  std::vector<deadbolt::reentrant_lock> members;
  for (auto& c : clients) members.push_back(c->lock(name));
  deadbolt::red_lock lock(std::move(members));
  check_pairs_do_not_allocate(io, [&](pair_count& count) { red_pairs(lock, count); });
}
