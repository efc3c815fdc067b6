// What a name holds in Redis, as client::async_inspect and blocking_client::inspect read it: which
// kind of lock, semaphore or latch it is, who holds it, its TTL, a fair lock's queue, a semaphore's
// permits, the fencing token. Every key of the name (docs/protocol.md §0) is read by one script, so
// the answer is one instant's state.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deadbolt/permit_id.hpp"

namespace deadbolt {

/// What the data under a name is. Kinds that share a layout cannot be told apart: a reentrant lock
/// and a spin lock (both `lock`), a semaphore and a count-down latch (both `semaphore_or_latch`).
enum class object_kind {
  none,                 ///< nothing is stored under the name
  lock,                 ///< a reentrant or spin lock's hash (docs/protocol.md §2, §5)
  fenced_lock,          ///< the same hash, or none, beside a fencing token counter (§6)
  fair_lock,            ///< the same hash, or none, with waiters queued (§3)
  read_write_lock,      ///< a hash with a "mode" field (§4)
  expirable_semaphore,  ///< a number beside a ZSET of acquired permits (§9)
  semaphore_or_latch,   ///< a number: a semaphore's available permits or a latch's count (§8, §10)
  other,                ///< a key of another type, a hash that is not a lock, a string that is not a number
};

/// "none", "lock", "fenced_lock", "fair_lock", "read_write_lock", "expirable_semaphore",
/// "semaphore_or_latch" or "other".
const char* to_string(object_kind kind) noexcept;

/// One owner's holds of a lock, as Redisson stores them.
struct lock_holder {
  /// The hash field: "<client uuid>:<thread id>" (deadbolt: the owner_id), with ":write" appended
  /// for the writer of a read/write lock.
  std::string owner;
  std::int64_t count = 0;  ///< hold count (a read/write lock: that owner's reads, or its writes)

  bool is_writer() const noexcept {
    return owner.size() > 6 && owner.compare(owner.size() - 6, 6, ":write") == 0;
  }
};

/// A fair lock's waiter, in queue order.
struct queued_waiter {
  std::string owner;                       ///< "<client uuid>:<thread id>"
  std::optional<std::int64_t> deadline_ms; ///< when its place lapses, ms since the epoch (none: not recorded)
};

/// A permit taken from a permit-expirable semaphore.
struct acquired_permit {
  permit_id id;
  std::optional<std::int64_t> expires_ms;  ///< ms since the epoch; none: it never expires
};

/// What client::async_inspect found under a name.
struct object_info {
  object_kind kind = object_kind::none;
  /// The Redis type of the key `name` itself: "none", "hash", "string", "list", ...
  std::string redis_type = "none";
  /// The key's remaining TTL: -2 ms if it does not exist, -1 ms if it has none.
  std::chrono::milliseconds ttl{-2};
  /// A read/write lock's mode: "read" or "write"; empty for every other kind.
  std::string mode;
  /// A lock's owners with their hold counts (a read/write lock: readers and the writer).
  std::vector<lock_holder> holders;
  /// A fair lock's waiters, first in line first.
  std::vector<queued_waiter> queue;
  /// A number's value: a semaphore's available permits, or a latch's count.
  std::optional<std::int64_t> value;
  /// A permit-expirable semaphore's acquired permits (expired ones included until reclaimed).
  std::vector<acquired_permit> permits;
  /// How many permits are acquired, also when `permits` lists only the first (truncated).
  std::size_t permit_count = 0;
  /// The last fencing token handed out, if the token counter exists.
  std::optional<std::uint64_t> fencing_token;
  /// kind other, on a hash: a field no lock hash has, which shows it is application data.
  std::string foreign_field;
  /// A collection (hash, queue, permits) had more entries than inspect lists (256): only the first are.
  bool truncated = false;

  /// Someone holds the lock (a lock kind with at least one holder).
  bool locked() const noexcept { return !holders.empty(); }
};

}  // namespace deadbolt
