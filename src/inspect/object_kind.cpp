#include "deadbolt/inspect.hpp"

namespace deadbolt {

const char* to_string(object_kind kind) noexcept {
  switch (kind) {
    case object_kind::none: return "none";
    case object_kind::lock: return "lock";
    case object_kind::fenced_lock: return "fenced_lock";
    case object_kind::fair_lock: return "fair_lock";
    case object_kind::read_write_lock: return "read_write_lock";
    case object_kind::expirable_semaphore: return "expirable_semaphore";
    case object_kind::semaphore_or_latch: return "semaphore_or_latch";
    case object_kind::other: return "other";
  }
  return "other";
}

}  // namespace deadbolt
