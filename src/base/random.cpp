#include "base/random.hpp"

#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {

std::uint64_t random_seed() noexcept {
  std::uint64_t seed = 0;
  if (!port::random_bytes(&seed, sizeof seed)) seed = static_cast<std::uint64_t>(port::monotonic_ns());
  return seed;
}

std::uint64_t thread_random() noexcept {
  thread_local pseudo_random generator(random_seed());
  return generator.next();
}

}  // namespace deadbolt::detail
