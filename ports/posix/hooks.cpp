// Hooks for Linux (glibc): the host port and the cross-compiled Linux ports share them.
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fcntl.h>
#include <semaphore.h>
#include <sys/random.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "deadbolt/port/hooks.hpp"

namespace deadbolt::port {
namespace {

std::int64_t read_clock(clockid_t id) noexcept {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<std::int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

}  // namespace

std::int64_t monotonic_ns() noexcept { return read_clock(CLOCK_MONOTONIC); }

std::int64_t wall_clock_ms() noexcept { return read_clock(CLOCK_REALTIME) / 1'000'000; }

bool random_bytes(void* out, std::size_t n) noexcept {
  auto* p = static_cast<unsigned char*>(out);
  while (n > 0) {
    const ssize_t got = getrandom(p, n, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += got;
    n -= static_cast<std::size_t>(got);
  }
  return true;
}

std::uint64_t thread_id() noexcept {
  thread_local const auto id = static_cast<std::uint64_t>(syscall(SYS_gettid));
  return id;
}

void close_on_exec(int native_handle) noexcept {
  const int flags = ::fcntl(native_handle, F_GETFD);
  if (flags >= 0) ::fcntl(native_handle, F_SETFD, flags | FD_CLOEXEC);
}

void fatal(const char* what) noexcept {
  std::fprintf(stderr, "deadbolt: fatal: %s\n", what);
  std::abort();
}

// A semaphore rather than a mutex and condition variable: the waiter wakes once, where a signal under
// the mutex woke it into a mutex still held by the signalling thread (a second sleep and wake-up on
// the blocking API's every call). glibc's sem_post touches the semaphore no more once the waiter can
// see the post, so the waiter may destroy it right after sem_wait returns.
static_assert(sizeof(sem_t) <= 32 && alignof(sem_t) <= 8, "thread_signal's storage is too small for sem_t");

thread_signal::thread_signal() noexcept {
  if (sem_init(reinterpret_cast<sem_t*>(storage_), 0, 0) != 0) fatal("sem_init failed");
}

thread_signal::~thread_signal() { sem_destroy(reinterpret_cast<sem_t*>(storage_)); }

void thread_signal::post() noexcept { sem_post(reinterpret_cast<sem_t*>(storage_)); }

void thread_signal::wait() noexcept {
  while (sem_wait(reinterpret_cast<sem_t*>(storage_)) != 0 && errno == EINTR) {
  }
}

}  // namespace deadbolt::port
