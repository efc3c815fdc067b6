// fencing_store: why fencing tokens matter, and how to use them.
//
// A lock with a lease can be lost without its holder noticing: a long GC pause, a stalled VM, a
// network partition. The holder wakes up, still believes it holds the lock, and writes — over the
// work of whoever legitimately took the lock meanwhile. The lock alone cannot stop that; the resource
// can. deadbolt::fenced_lock (Redisson's RFencedLock) hands out a token with every acquisition that
// strictly increases; the holder sends it along with each write, and the resource rejects any write
// carrying a smaller token than the largest it has seen.
//
// Here the "resource" is an in-process store. Two workers (two clients: think two processes):
//   round 1: they take the fenced lock in turn and write; every write is accepted;
//   round 2: worker A takes the lock with a 200 ms lease and then pauses for 400 ms. Its lease
//            expires, worker B takes the lock (a larger token) and writes. A wakes up and writes with
//            its old token: the store rejects it.
// Exits 0 if exactly the stale write was rejected.
//
//   fencing_store [redis://host:port]     (default: $REDIS_URL, else redis://127.0.0.1:6379)
//
// The clients run on an io_context thread; the workers are plain threads that wait for each operation
// (a callback fulfilling a std::promise), so this also builds without exceptions.
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <mutex>
#include <optional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include <deadbolt/deadbolt.hpp>

#include <asio.hpp>  // deadbolt's headers include only the Asio parts they use

using namespace std::chrono_literals;

namespace {

/// The protected resource: it remembers the largest fencing token it has seen and refuses writes
/// carrying a smaller one. (A real store would keep the token with the data, e.g. a conditional
/// UPDATE ... WHERE token <= ?, so that the check and the write are one step.)
class fenced_store {
 public:
  bool write(std::uint64_t token, const std::string& value) {
    std::lock_guard<std::mutex> guard(mutex_);
    if (token < highest_token_) {
      ++rejected_;
      std::printf("  store: REJECTED \"%s\" with token %llu (seen %llu)\n", value.c_str(),
                  static_cast<unsigned long long>(token), static_cast<unsigned long long>(highest_token_));
      return false;
    }
    highest_token_ = token;
    value_ = value;
    ++accepted_;
    std::printf("  store: accepted \"%s\" with token %llu\n", value.c_str(), static_cast<unsigned long long>(token));
    return true;
  }
  int accepted() const { std::lock_guard<std::mutex> g(mutex_); return accepted_; }
  int rejected() const { std::lock_guard<std::mutex> g(mutex_); return rejected_; }
  std::string value() const { std::lock_guard<std::mutex> g(mutex_); return value_; }

 private:
  mutable std::mutex mutex_;
  std::uint64_t highest_token_ = 0;
  std::string value_;
  int accepted_ = 0;
  int rejected_ = 0;
};

/// Starts an async operation with a callback and waits for it on this thread.
/// `start(callback)`; the result is the error code and the operation's value.
template <typename Value, typename Start>
std::pair<std::error_code, Value> wait_for(Start start) {
  std::promise<std::pair<std::error_code, Value>> done;
  auto result = done.get_future();
  start([&done](std::error_code ec, Value v) { done.set_value({ec, std::move(v)}); });
  return result.get();
}
template <typename Start>
std::error_code wait_for_void(Start start) {
  std::promise<std::error_code> done;
  auto result = done.get_future();
  start([&done](std::error_code ec) { done.set_value(ec); });
  return result.get();
}

/// A one-shot event, for ordering the story (see round 2).
class event {
 public:
  void set() {
    std::lock_guard<std::mutex> g(mutex_);
    set_ = true;
    cv_.notify_all();
  }
  bool wait_for(std::chrono::milliseconds limit) {
    std::unique_lock<std::mutex> g(mutex_);
    return cv_.wait_for(g, limit, [this] { return set_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool set_ = false;
};

const char* const lock_name = "deadbolt-example:fencing-store";
std::atomic<bool> failed{false};  // set from any worker thread

void fail(const char* who, const char* what, std::error_code ec) {
  std::fprintf(stderr, "%s: %s failed: %s\n", who, what, ec.message().c_str());
  failed = true;
}

/// Round 1: take the lock (watchdog lease), write with the token, unlock; `turns` times.
void take_turns(const char* who, deadbolt::client& client, fenced_store& store, int turns) {
  deadbolt::fenced_lock lock = client.fenced_lock(lock_name);
  const deadbolt::owner_id owner = deadbolt::new_owner_id();  // this worker's own: unique in the process
  for (int turn = 1; turn <= turns; ++turn) {
    const auto started = std::chrono::steady_clock::now();
    auto [ec, token] = wait_for<std::uint64_t>([&](auto cb) { lock.async_lock(owner, cb); });
    if (ec) return fail(who, "lock", ec);
    const auto waited = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
    std::printf("%s: locked after %lld ms, token %llu\n", who, static_cast<long long>(waited.count()),
                static_cast<unsigned long long>(token));
    store.write(token, std::string(who) + " turn " + std::to_string(turn));
    if (auto e = wait_for_void([&](auto cb) { lock.async_unlock(owner, cb); })) return fail(who, "unlock", e);
    std::this_thread::sleep_for(50ms);  // other work, outside the lock: lets the other worker in
  }
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
  std::printf("fencing_store: using %s\n", cfg.url.c_str());

  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&io] { io.run(); });
  fenced_store store;
  {
    deadbolt::client client_a(io.get_executor(), cfg);
    deadbolt::client client_b(io.get_executor(), cfg);
    if (auto ec = wait_for_void([&](auto cb) { client_a.async_connect(cb); })) {
      fail("A", "connect", ec);
    } else {
      std::printf("-- round 1: the workers take the fenced lock in turn\n");
      std::thread a([&] { take_turns("A", client_a, store, 2); });
      std::thread b([&] { take_turns("B", client_b, store, 2); });
      a.join();
      b.join();

      std::printf("-- round 2: A's lease runs out while it is paused\n");
      deadbolt::fenced_lock lock_a = client_a.fenced_lock(lock_name);
      deadbolt::fenced_lock lock_b = client_b.fenced_lock(lock_name);
      const deadbolt::owner_id owner_a = deadbolt::new_owner_id(), owner_b = deadbolt::new_owner_id();
      auto [ec_a, token_a] = wait_for<std::uint64_t>([&](auto cb) { lock_a.async_lock(owner_a, 200ms, cb); });
      if (ec_a) {
        fail("A", "lock", ec_a);
      } else {
        std::printf("A: locked with a 200 ms lease, token %llu; now pausing 400 ms (a GC pause, say)\n",
                    static_cast<unsigned long long>(token_a));
        event b_wrote;
        std::thread b([&] {
          // B waits for the lock; it gets it when A's lease expires, ~200 ms from now.
          const auto started = std::chrono::steady_clock::now();
          auto [ec, token] = wait_for<std::uint64_t>([&](auto cb) { lock_b.async_lock(owner_b, cb); });
          if (ec) return fail("B", "lock", ec);
          const auto waited =
              std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started);
          std::printf("B: locked after waiting %lld ms for A's lease to expire, token %llu\n",
                      static_cast<long long>(waited.count()), static_cast<unsigned long long>(token));
          store.write(token, "B after A's lease expired");
          b_wrote.set();
          if (auto e = wait_for_void([&](auto cb) { lock_b.async_unlock(owner_b, cb); })) fail("B", "unlock", e);
        });
        std::this_thread::sleep_for(400ms);  // the pause: twice A's lease
        // Nothing orders A's wake-up after B's write in real life; wait for it so the run is
        // deterministic even on a slow machine.
        if (!b_wrote.wait_for(10s)) fail("A", "waiting for B", deadbolt::errc::timed_out);
        std::printf("A: awake, still thinks it holds the lock; writing with token %llu\n",
                    static_cast<unsigned long long>(token_a));
        store.write(token_a, "A, stale");
        // A's unlock reports that the lock is no longer its own.
        auto ec = wait_for_void([&](auto cb) { lock_a.async_unlock(owner_a, cb); });
        std::printf("A: unlock: %s\n", ec ? ec.message().c_str() : "ok (unexpected)");
        b.join();
      }
    }
  }  // the clients shut down
  work.reset();
  io_thread.join();

  std::printf("store: %d writes accepted, %d rejected; value \"%s\"\n", store.accepted(), store.rejected(),
              store.value().c_str());
  const bool ok = !failed && store.accepted() == 5 && store.rejected() == 1 &&
                  store.value() == "B after A's lease expired";
  std::printf("fencing_store: %s\n", ok ? "ok, the stale write was fenced off" : "FAILED");
  return ok ? 0 : 1;
}
