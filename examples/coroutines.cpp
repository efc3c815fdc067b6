// coroutines: the asynchronous client from C++20 coroutines (asio::use_awaitable), built with
// CXX_STANDARD 20. Shows:
//   1. try_lock with a bounded wait and a fixed lease, then unlock;
//   2. giving up on a wait with Asio's awaitable operators: lock() || timer — whichever finishes
//      first wins and the other is cancelled;
//   3. cancelling a wait explicitly through a cancellation signal bound to the operation.
// A second client ("rival", standing for another process) holds the lock during 2 and 3.
//
// With asio::use_awaitable an error arrives as a std::system_error thrown from co_await; with
// asio::experimental::as_tuple(asio::use_awaitable) it arrives as a value instead (step 3).
//
//   coroutines [redis://host:port]     (default: $REDIS_URL, else redis://127.0.0.1:6379)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <system_error>
#include <tuple>
#include <variant>

#include <deadbolt/deadbolt.hpp>

#include <asio.hpp>  // deadbolt's headers include only the Asio parts they use
#include <asio/experimental/as_tuple.hpp>
#include <asio/experimental/awaitable_operators.hpp>

using namespace std::chrono_literals;
using asio::use_awaitable;

namespace {

// Every task that holds locks needs its own owner id (a lock is reentrant per owner): new_owner_id()
// makes ids unique in the process. A shared constant would let two tasks hold the lock "together".
const deadbolt::owner_id me = deadbolt::new_owner_id();
const deadbolt::owner_id rival_owner = deadbolt::new_owner_id();
const char* const lock_name = "deadbolt-example:coroutines";

asio::awaitable<void> demo(deadbolt::client& client, deadbolt::client& rival) {
  auto ex = co_await asio::this_coro::executor;
  deadbolt::reentrant_lock lock = client.lock(lock_name);

  // 1. Wait at most 2 s for the lock; once acquired, hold it for a fixed 10 s lease (no watchdog: if
  //    we stalled longer than that, the lock would expire and someone else could take it).
  const bool got = co_await lock.async_try_lock(me, 2s, 10s, use_awaitable);
  if (!got) throw std::runtime_error("1: the lock should have been free");
  const auto ttl = co_await lock.async_remaining_ttl(use_awaitable);
  std::printf("1: acquired with a 10 s lease (%lld ms left); working\n", static_cast<long long>(ttl.count()));
  asio::steady_timer work(ex, 100ms);
  co_await work.async_wait(use_awaitable);
  co_await lock.async_unlock(me, use_awaitable);
  std::printf("1: unlocked\n");

  // The rival takes the lock (watchdog lease) and keeps it for the next two steps.
  deadbolt::reentrant_lock rivals_lock = rival.lock(lock_name);
  co_await rivals_lock.async_lock(rival_owner, use_awaitable);
  std::printf("rival: holds the lock\n");

  // 2. lock() would wait forever; race it against a 300 ms timer. When the timer wins, the operators
  //    cancel the lock operation, which stops waiting (and gives up its place) before completing.
  {
    using namespace asio::experimental::awaitable_operators;
    asio::steady_timer deadline(ex, 300ms);
    const auto started = std::chrono::steady_clock::now();
    std::variant<std::monostate, std::monostate> winner =
        co_await (lock.async_lock(me, use_awaitable) || deadline.async_wait(use_awaitable));
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    if (winner.index() == 0) throw std::runtime_error("2: acquired a lock the rival holds");
    std::printf("2: gave up after %lld ms: the timer won, the wait was cancelled\n",
                static_cast<long long>(waited.count()));
  }

  // 3. The same with an explicit cancellation signal: something else (here a timer) emits it.
  {
    asio::cancellation_signal cancel;
    asio::steady_timer later(ex, 200ms);
    later.async_wait([&cancel](std::error_code) { cancel.emit(asio::cancellation_type::terminal); });
    auto [ec, acquired] = co_await lock.async_try_lock(
        me, 30s, 0ms, asio::bind_cancellation_slot(cancel.slot(), asio::experimental::as_tuple(use_awaitable)));
    if (ec != asio::error::operation_aborted || acquired) throw std::runtime_error("3: expected a cancelled wait");
    std::printf("3: a 30 s wait cancelled after 200 ms: %s\n", ec.message().c_str());
  }

  co_await rivals_lock.async_unlock(rival_owner, use_awaitable);
  std::printf("rival: unlocked\n");
  if (co_await lock.async_is_locked(use_awaitable)) throw std::runtime_error("the lock is still held");
}

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr in order when piped
  deadbolt::config cfg;
  if (argc > 1) {
    cfg.url = argv[1];
  } else if (const char* env = std::getenv("REDIS_URL")) {
    cfg.url = env;
  }
  cfg.connect_timeout = 3s;
  std::printf("coroutines: using %s\n", cfg.url.c_str());

  asio::io_context io;
  deadbolt::client client(io.get_executor(), cfg);
  deadbolt::client rival(io.get_executor(), cfg);
  client.on_lease_lost([](std::string_view name, deadbolt::owner_id) {
    std::printf("lease lost on %.*s\n", static_cast<int>(name.size()), name.data());
  });

  int status = 1;
  // co_spawn's completion handler receives whatever the coroutine threw (a std::system_error from a
  // failed operation, or our own std::runtime_error).
  asio::co_spawn(io, demo(client, rival), [&](std::exception_ptr error) {
    if (error) {
      try {
        std::rethrow_exception(error);
      } catch (const std::exception& e) {
        std::fprintf(stderr, "failed: %s\n", e.what());
      }
    } else {
      status = 0;
    }
    client.shutdown();  // with the clients closed, run() returns
    rival.shutdown();
  });
  io.run();
  std::printf("coroutines: %s\n", status == 0 ? "ok" : "FAILED");
  return status;
}
