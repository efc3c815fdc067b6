// The library's randomness, in one place. Seeds come from the platform's random bytes
// (port::random_bytes; identifiers take theirs from it too, base/ids.cpp); numbers that need only be
// different, not secret — unlock request ids, backoff jitter — come from splitmix64 generators.
#pragma once

#include <cstdint>

namespace deadbolt::detail {

/// A seed from the platform's random bytes, or from the monotonic clock if it has none.
std::uint64_t random_seed() noexcept;

/// splitmix64: fast, and every seed (0 too) gives a full-period sequence.
class pseudo_random {
 public:
  explicit pseudo_random(std::uint64_t seed) noexcept : state_(seed) {}
  std::uint64_t next() noexcept {
    std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

 private:
  std::uint64_t state_;
};

/// The next number of this thread's generator (seeded once, with random_seed()).
std::uint64_t thread_random() noexcept;

}  // namespace deadbolt::detail
