#include "alloc_counter.hpp"

#include <execinfo.h>
#include <malloc.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>

// glibc's own entry points, which its malloc, calloc, realloc, free and aligned allocators are
// aliases of (aligned_alloc and memalign are both __libc_memalign).
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void __libc_free(void* ptr);
void* __libc_memalign(std::size_t alignment, std::size_t size);
void* __libc_valloc(std::size_t size);
void* __libc_pvalloc(std::size_t size);
}

namespace {
// Every thread counts (a blocking call allocates on the caller's thread and on the loop's). Relaxed
// atomics: reading the flag is a plain load, and the increment only runs for an allocation.
std::atomic<bool> counting{false};
std::atomic<std::size_t> allocations{0};
// DEADBOLT_BENCH_ALLOC_TRACE=N: the call stacks of the first N counted allocations go to stderr
// (resolve them with addr2line -f -C -e <binary> <offset>).
std::atomic<long> trace_left{0};
thread_local bool tracing = false;

void trace() noexcept {
  tracing = true;  // backtrace() may allocate
  void* frames[32];
  const int n = backtrace(frames, 32);
  static const char header[] = "-- counted allocation:\n";
  if (write(2, header, sizeof header - 1) < 0) {}
  backtrace_symbols_fd(frames, n, 2);
  tracing = false;
}

inline void count() noexcept {
  if (!counting.load(std::memory_order_relaxed)) return;
  allocations.fetch_add(1, std::memory_order_relaxed);
  if (!tracing && trace_left.load(std::memory_order_relaxed) > 0 &&
      trace_left.fetch_sub(1, std::memory_order_relaxed) > 0) {
    trace();
  }
}
}  // namespace

namespace deadbolt::bench {

void start_counting_allocations() noexcept {
  if (const char* n = std::getenv("DEADBOLT_BENCH_ALLOC_TRACE")) {
    void* frame;
    backtrace(&frame, 1);  // loads the unwinder now, not while counting
    trace_left.store(std::atol(n), std::memory_order_relaxed);
  }
  allocations.store(0, std::memory_order_relaxed);
  counting.store(true, std::memory_order_seq_cst);
}

std::size_t stop_counting_allocations() noexcept {
  counting.store(false, std::memory_order_seq_cst);
  return allocations.load(std::memory_order_relaxed);
}

std::size_t heap_bytes_in_use() noexcept {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

}  // namespace deadbolt::bench

// Definitions in the executable take precedence over libc's for every library in the process
// (libstdc++'s operator new and hiredis included).
extern "C" {

void* malloc(std::size_t size) noexcept {
  count();
  return __libc_malloc(size);
}

void* calloc(std::size_t count_, std::size_t size) noexcept {
  count();
  return __libc_calloc(count_, size);
}

void* realloc(void* ptr, std::size_t size) noexcept {
  count();
  return __libc_realloc(ptr, size);
}

void free(void* ptr) noexcept { __libc_free(ptr); }

void* aligned_alloc(std::size_t alignment, std::size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}

void* memalign(std::size_t alignment, std::size_t size) noexcept {
  count();
  return __libc_memalign(alignment, size);
}

int posix_memalign(void** out, std::size_t alignment, std::size_t size) noexcept {
  // glibc's checks: a power of two multiple of sizeof(void*).
  if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0 || alignment == 0) return EINVAL;
  count();
  void* p = __libc_memalign(alignment, size);
  if (p == nullptr) return ENOMEM;
  *out = p;
  return 0;
}

void* valloc(std::size_t size) noexcept {
  count();
  return __libc_valloc(size);
}

void* pvalloc(std::size_t size) noexcept {
  count();
  return __libc_pvalloc(size);
}

}  // extern "C"
