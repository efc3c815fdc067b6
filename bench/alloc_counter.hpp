// Heap allocation counting for benchmarks: alloc_counter.cpp replaces malloc, calloc, realloc and
// free for the whole process (forwarding to glibc) and counts allocations while a scope is open.
#pragma once

#include <cstddef>

namespace deadbolt::bench {

/// Starts counting from zero.
void start_counting_allocations() noexcept;
/// Stops counting; returns the allocations (malloc, calloc, realloc) made since the start.
std::size_t stop_counting_allocations() noexcept;

}  // namespace deadbolt::bench
