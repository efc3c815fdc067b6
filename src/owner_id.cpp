#include "deadbolt/owner_id.hpp"

#include <atomic>

namespace deadbolt {

owner_id new_owner_id() noexcept {
  // Counts down from -1: the blocking API's owners are thread ids, which are never negative
  // (port::thread_id()). 2^63 ids are more than a process can ask for.
  static std::atomic<owner_id> last{0};
  return last.fetch_sub(1, std::memory_order_relaxed) - 1;
}

}  // namespace deadbolt
