// Test helpers: an io_context on its own thread, and calling an async operation synchronously with a
// plain callback (works without exceptions, unlike asio::use_future).
#pragma once

#include <chrono>
#include <condition_variable>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <system_error>
#include <thread>
#include <type_traits>
#include <utility>

#include <doctest/doctest.h>

#include "deadbolt/port/asio.hpp"

namespace deadbolt::test {

struct io_thread {
  asio::io_context io;
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::thread thread{[this] { io.run(); }};

  ~io_thread() {
    work.reset();  // run() returns once the clients have shut down
    thread.join();
  }
  asio::any_io_executor executor() { return io.get_executor(); }

  /// Returns once every handler queued before this call has finished on the loop thread (for
  /// asio::use_future: the loop thread drops its reference to a future's shared state after the value
  /// is set, in atomics that ThreadSanitizer cannot see inside libstdc++; waiting here orders it).
  void drain() {
    std::mutex m;
    std::condition_variable cv;
    bool done = false;
    asio::post(io, [&] {
      std::lock_guard<std::mutex> hold(m);
      done = true;
      cv.notify_one();
    });
    std::unique_lock<std::mutex> hold(m);
    cv.wait(hold, [&] { return done; });
  }
};

template <typename T>
struct outcome {
  std::error_code ec;
  T value{};
};
struct none {};

/// The callback call() hands to an operation. One type per result type, whatever the call site: the
/// operation's templates are instantiated once per test file, not once per call (a lambda defined in
/// call() would be a new type at every call site, and the test files took minutes to compile).
template <typename T>
struct completion {
  std::shared_ptr<std::promise<outcome<T>>> promise;

  void operator()(std::error_code ec) const { promise->set_value(outcome<T>{ec, T{}}); }
  template <typename V>
  void operator()(std::error_code ec, V&& v) const {
    promise->set_value(outcome<T>{ec, T(std::forward<V>(v))});
  }
};

/// Runs `start(callback)` and waits for the callback (at most `limit`): outcome<T> with the error code
/// and the value (T = none for void(std::error_code) operations).
template <typename T = none, typename Start>
outcome<T> call(Start&& start, std::chrono::seconds limit = std::chrono::seconds(30)) {
  auto promise = std::make_shared<std::promise<outcome<T>>>();
  auto future = promise->get_future();
  start(completion<T>{promise});
  REQUIRE_MESSAGE(future.wait_for(limit) == std::future_status::ready, "operation did not complete in time");
  return future.get();
}

/// Polls `pred` every `interval` until it holds (true) or `limit` has passed (false).
template <typename Pred>
bool eventually(Pred&& pred, std::chrono::milliseconds limit,
                std::chrono::milliseconds interval = std::chrono::milliseconds(10)) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (pred()) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(interval);
  }
}

}  // namespace deadbolt::test
