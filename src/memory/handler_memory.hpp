// Fixed memory for an operation that is never outstanding twice (a connection's one read, its one
// write), so starting it again does not allocate.
#pragma once

#include <cstddef>
#include <new>
#include <type_traits>

namespace deadbolt::detail {

class handler_memory {
 public:
  handler_memory() = default;
  handler_memory(const handler_memory&) = delete;
  handler_memory& operator=(const handler_memory&) = delete;

  void* allocate(std::size_t size) {
    if (!in_use_ && size <= sizeof(storage_)) {
      in_use_ = true;
      return &storage_;
    }
    return ::operator new(size);
  }
  bool in_use() const noexcept { return in_use_; }
  void deallocate(void* p) {
    if (p == &storage_) {
      in_use_ = false;
    } else {
      ::operator delete(p);
    }
  }

 private:
  alignas(std::max_align_t) unsigned char storage_[1024];
  bool in_use_ = false;
};

/// The allocator to bind (asio::bind_allocator) to handlers that use a handler_memory.
template <typename T>
class handler_allocator {
 public:
  using value_type = T;
  explicit handler_allocator(handler_memory& m) noexcept : memory_(&m) {}
  template <typename U>
  handler_allocator(const handler_allocator<U>& other) noexcept : memory_(other.memory_) {}

  T* allocate(std::size_t n) { return static_cast<T*>(memory_->allocate(sizeof(T) * n)); }
  void deallocate(T* p, std::size_t) { memory_->deallocate(p); }
  template <typename U>
  bool operator==(const handler_allocator<U>& o) const noexcept { return memory_ == o.memory_; }
  template <typename U>
  bool operator!=(const handler_allocator<U>& o) const noexcept { return memory_ != o.memory_; }

 private:
  template <typename>
  friend class handler_allocator;
  handler_memory* memory_;
};

}  // namespace deadbolt::detail
