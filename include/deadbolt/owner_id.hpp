// Owner ids: who holds a lock within one client.
#pragma once

#include <cstdint>

namespace deadbolt {

/// Identifies who holds a lock within this client: the second half of the Redis hash field
/// "<client uuid>:<owner id>". Redisson uses the Java thread id, deadbolt's blocking API the calling
/// thread's id; async code passes its own, best made by new_owner_id().
///
/// A lock is reentrant per owner: two tasks that pass the same id to one client's lock both "acquire"
/// it, the second by re-entering the first one's hold. Give every independent task its own id.
using owner_id = std::int64_t;

/// A new owner id, unique in this process: never 0, never an id returned before, and never a thread
/// id the blocking API uses (those are non-negative; these are -1, -2, -3, ...). Thread-safe and
/// lock-free; it allocates nothing.
owner_id new_owner_id() noexcept;

}  // namespace deadbolt
