#include "alloc_counter.hpp"

#include <cstdlib>

// glibc's own entry points, which its malloc, calloc, realloc and free are aliases of.
extern "C" {
void* __libc_malloc(std::size_t size);
void* __libc_calloc(std::size_t count, std::size_t size);
void* __libc_realloc(void* ptr, std::size_t size);
void __libc_free(void* ptr);
}

namespace {
// Benchmarks count on one thread; plain variables keep the counting cost out of the figures.
bool counting = false;
std::size_t allocations = 0;

inline void count() noexcept {
  if (counting) ++allocations;
}
}  // namespace

namespace deadbolt::bench {

void start_counting_allocations() noexcept {
  allocations = 0;
  counting = true;
}

std::size_t stop_counting_allocations() noexcept {
  counting = false;
  return allocations;
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

}  // extern "C"
