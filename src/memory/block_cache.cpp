#include "deadbolt/detail/block_cache.hpp"

#include <array>
#include <cstdlib>

namespace deadbolt::detail {
namespace {

constexpr std::size_t granule = 32;
constexpr std::size_t classes = 16;          // blocks up to 512 bytes are cached
constexpr std::size_t max_free_per_class = 4096;

struct free_block {
  free_block* next;
};

// Per thread: a free list per size class. Blocks freed on another thread than the one that allocated
// them simply join that thread's lists.
struct thread_cache {
  std::array<free_block*, classes> heads{};
  std::array<std::size_t, classes> counts{};
  ~thread_cache() {
    for (free_block* head : heads) {
      while (head != nullptr) {
        free_block* next = head->next;
        ::operator delete(head);
        head = next;
      }
    }
  }
};

thread_local thread_cache cache;

std::size_t class_of(std::size_t size) { return (size + granule - 1) / granule - 1; }

}  // namespace

void* cached_allocate(std::size_t size) {
  if (size == 0) size = 1;
  const std::size_t c = class_of(size);
  if (c >= classes) return ::operator new(size);
  if (free_block* b = cache.heads[c]) {
    cache.heads[c] = b->next;
    --cache.counts[c];
    return b;
  }
  return ::operator new((c + 1) * granule);
}

void cached_deallocate(void* block, std::size_t size) noexcept {
  if (block == nullptr) return;
  if (size == 0) size = 1;
  const std::size_t c = class_of(size);
  if (c >= classes || cache.counts[c] >= max_free_per_class) {
    ::operator delete(block);
    return;
  }
  auto* b = static_cast<free_block*>(block);
  b->next = cache.heads[c];
  cache.heads[c] = b;
  ++cache.counts[c];
}

}  // namespace deadbolt::detail
