// Heap allocation counting for benchmarks and tests/lock/steady_allocation_test: alloc_counter.cpp
// replaces malloc, calloc, realloc, the aligned allocators (aligned_alloc, memalign, posix_memalign,
// valloc, pvalloc: Asio's recycling allocator uses aligned_alloc) and free for the whole process
// (forwarding to glibc) and counts allocations while a scope is open.
#pragma once

#include <cstddef>

namespace deadbolt::bench {

/// Starts counting from zero: every thread's allocations count until stop_counting_allocations().
void start_counting_allocations() noexcept;
/// Stops counting; returns the allocations (malloc, calloc, realloc, aligned forms) made since the start.
std::size_t stop_counting_allocations() noexcept;

/// Heap bytes in use in the whole process, all arenas, from glibc's mallinfo2(): chunks handed out
/// (uordblks, chunk headers included) plus mmapped blocks (hblkhd).
std::size_t heap_bytes_in_use() noexcept;

}  // namespace deadbolt::bench
