// The platform hooks: everything the portable core needs from the operating system. Portable code
// includes this header, never a platform header. Each port provides one implementation.
#pragma once

#include <cstddef>
#include <cstdint>

namespace deadbolt::port {

/// Monotonic time in nanoseconds: timeouts, deadlines and elapsed time.
std::int64_t monotonic_ns() noexcept;

/// Wall-clock time in milliseconds since the Unix epoch. Redisson's fair lock and permit-expirable
/// semaphore put client wall-clock deadlines into Redis, so this must agree with the Java peers' clocks.
std::int64_t wall_clock_ms() noexcept;

/// Fills `out` with `n` cryptographically random bytes (client UUIDs, unlock request ids).
/// Returns false if the platform could not supply them.
bool random_bytes(void* out, std::size_t n) noexcept;

/// A number identifying the calling thread among the live threads of this process: the owner id of the
/// blocking API, as Java's thread id is for Redisson. Below 2^63: deadbolt::new_owner_id() hands out
/// the negative owner ids, so they never meet a thread's.
std::uint64_t thread_id() noexcept;

/// Keeps a socket from being inherited by programs the process starts (a `deadbolt run` COMMAND must
/// not hold the client's connections open).
void close_on_exec(int native_handle) noexcept;

/// One thread waits until another posts, once: a blocking call's caller waits for the loop thread
/// to finish its operation. The object may be destroyed as soon as wait() has returned, even while
/// post() is still returning (the caller's stack holds it). Everything written before post() is
/// visible after wait().
class thread_signal {
 public:
  thread_signal() noexcept;
  ~thread_signal();
  thread_signal(const thread_signal&) = delete;
  thread_signal& operator=(const thread_signal&) = delete;

  void post() noexcept;
  void wait() noexcept;

 private:
  alignas(8) unsigned char storage_[32];  // the platform's object (a POSIX semaphore)
};

/// Ends the process after printing `what`: what a throw becomes in builds without exceptions.
[[noreturn]] void fatal(const char* what) noexcept;

}  // namespace deadbolt::port
