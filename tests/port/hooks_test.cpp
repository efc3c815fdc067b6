#include <doctest/doctest.h>

#include <array>
#include <chrono>
#include <set>
#include <system_error>
#include <thread>

#include <fcntl.h>

#include "deadbolt/port/asio.hpp"
#include "deadbolt/port/hooks.hpp"

namespace port = deadbolt::port;

TEST_CASE("monotonic clock never goes back and advances across a sleep") {
  const auto a = port::monotonic_ns();
  std::this_thread::sleep_for(std::chrono::milliseconds(2));
  const auto b = port::monotonic_ns();
  CHECK(b - a >= 2'000'000);
}

TEST_CASE("wall clock is epoch milliseconds") {
  const auto now = port::wall_clock_ms();
  CHECK(now > 1'600'000'000'000);   // after 2020
  CHECK(now < 4'102'444'800'000);   // before 2100
}

TEST_CASE("random bytes differ between calls") {
  std::array<unsigned char, 16> a{}, b{};
  REQUIRE(port::random_bytes(a.data(), a.size()));
  REQUIRE(port::random_bytes(b.data(), b.size()));
  CHECK(a != b);
}

TEST_CASE("thread ids are stable within a thread and differ across threads") {
  const auto mine = port::thread_id();
  CHECK(port::thread_id() == mine);
  std::uint64_t other = 0;
  std::thread t([&] { other = port::thread_id(); });
  t.join();
  CHECK(other != 0);
  CHECK(other != mine);
}

TEST_CASE("asio runs a timer through the port's asio header (also without exceptions)") {
  asio::io_context io;
  asio::steady_timer timer(io, std::chrono::milliseconds(1));
  std::error_code result = asio::error::operation_aborted;
  timer.async_wait([&](std::error_code ec) { result = ec; });
  io.run();
  CHECK_FALSE(result);
}

TEST_CASE("thread_signal: wait returns once another thread posts, and the signal may go at once") {
  // Posted before the wait: wait() returns at once.
  {
    deadbolt::port::thread_signal s;
    s.post();
    s.wait();
  }
  // Many handoffs, each signal destroyed as soon as its wait returns (a blocking call's waiter on the
  // caller's stack), the value written before post() seen after wait().
  for (int i = 0; i < 200; ++i) {
    auto* s = new deadbolt::port::thread_signal;
    int value = 0;
    std::thread poster([&] {
      value = i + 1;
      s->post();
    });
    s->wait();
    CHECK(value == i + 1);
    delete s;
    poster.join();
  }
}

TEST_CASE("close_on_exec marks a descriptor") {
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  std::error_code ec;
  socket.open(asio::ip::tcp::v4(), ec);
  REQUIRE_FALSE(ec);
  port::close_on_exec(socket.native_handle());
  CHECK((::fcntl(socket.native_handle(), F_GETFD) & FD_CLOEXEC) != 0);
}

#include <vector>

#include "deadbolt/port/resolver.hpp"

TEST_CASE("host names go through the port's resolver, or there is none") {
  asio::io_context io;
#if DEADBOLT_TEST_SYSTEM_RESOLVER
  REQUIRE(port::resolves_host_names());
  auto resolver = port::make_host_resolver(io.get_executor());
  REQUIRE(resolver != nullptr);
  bool called = false;
  std::error_code result = asio::error::would_block;
  std::vector<asio::ip::tcp::endpoint> found;
  resolver->async_resolve("localhost", 6379, [&](std::error_code ec, std::vector<asio::ip::tcp::endpoint> eps) {
    called = true;
    result = ec;
    found = std::move(eps);
  });
  CHECK_FALSE(called);  // never inside the call
  io.run();
  REQUIRE(called);
  CHECK_FALSE(result);
  REQUIRE_FALSE(found.empty());
  for (const auto& ep : found) {
    CHECK(ep.address().is_loopback());
    CHECK(ep.port() == 6379);
  }

  // A cancelled resolution still completes, once, with operation_aborted.
  int completions = 0;
  io.restart();
  resolver->async_resolve("localhost", 6379, [&](std::error_code ec, std::vector<asio::ip::tcp::endpoint>) {
    ++completions;
    result = ec;
  });
  resolver->cancel();
  io.run();
  CHECK(completions == 1);
  CHECK(result == asio::error::operation_aborted);
#else
  CHECK_FALSE(port::resolves_host_names());
  CHECK(port::make_host_resolver(io.get_executor()) == nullptr);
#endif
}
