// Memory inside a blocking call's waiter (src/blocking/blocking_token.hpp) for what the call allocates:
// the initiation it posts to the loop and the completion object the engine makes for its handler.
// The caller's thread would allocate them and the loop's free them, which no per-thread cache can
// recycle; the waiter lives on the caller's stack until both are gone.
#pragma once

#include <cstddef>
#include <new>

namespace deadbolt::detail {

/// Room inside the waiter for what a blocking call allocates: the posted initiation and the handler's
/// completion object (anything larger, or a third, goes to the heap).
class blocking_slot {
 public:
  void* take(std::size_t size, std::size_t align) {
    if (size <= block_size && align <= alignof(std::max_align_t)) {
      for (block& b : blocks_) {
        if (!b.used) {
          b.used = true;
          return b.storage;
        }
      }
    }
    return ::operator new(size);
  }
  void give_back(void* p) noexcept {
    for (block& b : blocks_) {
      if (p == static_cast<void*>(b.storage)) {
        b.used = false;
        return;
      }
    }
    ::operator delete(p);
  }

 private:
  static constexpr std::size_t block_size = 192;
  struct block {
    alignas(std::max_align_t) unsigned char storage[block_size];
    bool used = false;
  };
  block blocks_[2];
};

template <typename T>
class blocking_slot_allocator {
 public:
  using value_type = T;
  explicit blocking_slot_allocator(blocking_slot& s) noexcept : slot_(&s) {}
  template <typename U>
  blocking_slot_allocator(const blocking_slot_allocator<U>& other) noexcept : slot_(other.slot()) {}

  T* allocate(std::size_t n) { return static_cast<T*>(slot_->take(n * sizeof(T), alignof(T))); }
  void deallocate(T* p, std::size_t) noexcept { slot_->give_back(p); }
  blocking_slot* slot() const noexcept { return slot_; }

  template <typename U>
  bool operator==(const blocking_slot_allocator<U>& o) const noexcept { return slot_ == o.slot(); }
  template <typename U>
  bool operator!=(const blocking_slot_allocator<U>& o) const noexcept { return slot_ != o.slot(); }

 private:
  blocking_slot* slot_;
};

}  // namespace deadbolt::detail
