// Memory for operation objects. Asio's recycling allocator keeps two blocks per thread, which a client
// with many operations in flight (or a read, a write and a completion per round trip) outgrows; this
// cache keeps up to a few thousand small blocks per thread, by size, so steady-state operations do not
// reach malloc.
#pragma once

#include <cstddef>
#include <new>

namespace deadbolt::detail {

/// A block of at least `size` bytes, suitably aligned for any standard type.
void* cached_allocate(std::size_t size);
/// Returns a block from cached_allocate(size) (same size).
void cached_deallocate(void* block, std::size_t size) noexcept;

/// The default allocator of deadbolt's completion objects (a handler's own associated allocator wins).
template <typename T>
class cached_allocator {
 public:
  using value_type = T;
  cached_allocator() noexcept = default;
  template <typename U>
  cached_allocator(const cached_allocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      return static_cast<T*>(::operator new(n * sizeof(T), std::align_val_t(alignof(T))));
    } else {
      return static_cast<T*>(cached_allocate(n * sizeof(T)));
    }
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if constexpr (alignof(T) > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
      ::operator delete(p, std::align_val_t(alignof(T)));
    } else {
      cached_deallocate(p, n * sizeof(T));
    }
  }
  template <typename U>
  bool operator==(const cached_allocator<U>&) const noexcept { return true; }
  template <typename U>
  bool operator!=(const cached_allocator<U>&) const noexcept { return false; }
};

}  // namespace deadbolt::detail
