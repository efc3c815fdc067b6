// blocking_guard: the blocking API. A deadbolt::blocking_client runs its own event-loop thread; its
// lock objects meet the standard TimedLockable requirements, so std::lock_guard (std::unique_lock,
// std::scoped_lock) guards a critical section with a Redis lock exactly as it would with a std::mutex.
//
// Three threads share one client and take the lock "deadbolt-example:blocking-guard" in turn. The owner
// of a blocking lock is the calling thread, so the threads exclude each other through Redis just as
// three processes (or a Java service using Redisson's RLock of the same name) would.
//
//   blocking_guard [redis://host:port]     (default: $REDIS_URL, else redis://127.0.0.1:6379)
//
// Exits 0 if no two threads were ever inside the critical section at once.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <deadbolt/deadbolt.hpp>

using namespace std::chrono_literals;

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr in order when piped
  deadbolt::config cfg;
  if (argc > 1) {
    cfg.url = argv[1];
  } else if (const char* env = std::getenv("REDIS_URL")) {
    cfg.url = env;
  }
  std::printf("blocking_guard: using %s\n", cfg.url.c_str());

  deadbolt::blocking_client client(cfg);  // starts the loop thread; nothing is sent yet
  // The plain lock() throws std::system_error when the server cannot be reached (and ends the process
  // in builds without exceptions), so check the configuration and the connection first and report
  // them as error codes.
  if (std::error_code ec = client.config_error()) {
    std::fprintf(stderr, "bad config: %s\n", ec.message().c_str());
    return 1;
  }
  if (std::error_code ec = client.connect()) {
    std::fprintf(stderr, "cannot connect to %s: %s\n", cfg.url.c_str(), ec.message().c_str());
    return 1;
  }
  // Called on the client's loop thread if the watchdog finds a held lease gone (not expected here).
  client.on_lease_lost([](std::string_view name, std::int64_t owner) {
    std::printf("lease lost: %.*s (owner %lld)\n", static_cast<int>(name.size()), name.data(),
                static_cast<long long>(owner));
  });

  std::atomic<int> inside{0};       // how many threads are in the critical section right now
  std::atomic<bool> overlap{false}; // set if two ever were
  std::mutex print_mutex;           // only for tidy output

  auto worker = [&](int id) {
    // Lock objects are cheap handles; each thread may have its own or share one.
    deadbolt::blocking_lock lock = client.lock("deadbolt-example:blocking-guard");
    for (int turn = 1; turn <= 2; ++turn) {
      // lock_guard calls lock(): it waits as long as it takes (woken by Redisson's unlock message),
      // with no lease, so the client's watchdog keeps renewing the lease until unlock().
      std::lock_guard<deadbolt::blocking_lock> guard(lock);
      if (inside.fetch_add(1) != 0) overlap = true;
      {
        std::lock_guard<std::mutex> p(print_mutex);
        std::printf("thread %d: in the critical section (turn %d)\n", id, turn);
      }
      std::this_thread::sleep_for(50ms);  // the work the lock protects
      inside.fetch_sub(1);
      // ~lock_guard calls unlock(), which never throws.
    }
  };
  std::vector<std::thread> threads;
  for (int id = 1; id <= 3; ++id) threads.emplace_back(worker, id);
  for (auto& t : threads) t.join();

  // try_lock_for: wait a bounded time instead of forever. The lock is free now, so this succeeds.
  deadbolt::blocking_lock lock = client.lock("deadbolt-example:blocking-guard");
  if (!lock.try_lock_for(1s)) {
    std::fprintf(stderr, "try_lock_for: the lock should have been free\n");
    return 1;
  }
  std::error_code ec;
  std::printf("try_lock_for: acquired, hold count %lld\n", static_cast<long long>(lock.hold_count(ec)));
  lock.unlock(ec);  // the error_code form reports the outcome
  if (ec) {
    std::fprintf(stderr, "unlock: %s\n", ec.message().c_str());
    return 1;
  }

  // std::lock_guard cannot tell you that the lease was lost while you held the lock (the watchdog
  // found it gone: it expired or was deleted, and someone else may have been inside too).
  // deadbolt::checked_guard can: it never throws, and reports into the error code it was given —
  // why it did not get the lock, then the release's outcome (errc::lease_lost, say).
  {
    deadbolt::checked_guard guard(lock, ec);
    if (!guard) {
      std::fprintf(stderr, "checked_guard: not acquired: %s\n", ec.message().c_str());
      return 1;
    }
    std::printf("checked_guard: in the critical section\n");
  }  // released here
  if (ec) {
    std::fprintf(stderr, "checked_guard: the release reports %s\n", ec.message().c_str());
    return 1;
  }
  std::printf("checked_guard: released cleanly\n");

  if (overlap) {
    std::fprintf(stderr, "FAILED: two threads were in the critical section at once\n");
    return 1;
  }
  std::printf("blocking_guard: ok, the threads took the lock one at a time\n");
  return 0;
}
