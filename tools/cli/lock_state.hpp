// What Redis holds for a name, as `status` reads it (the key layouts of docs/protocol.md §0), and
// which kind of object that is.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "holder_info.hpp"

namespace deadbolt::cli {

struct lock_holder {
  std::string field;                 ///< "<uuid>:<owner>[:write]", or a permit id's hex
  std::int64_t count = 0;            ///< hold count (a permit: 1)
  std::optional<std::int64_t> expires_ms;  ///< a permit's expiry (ms since the epoch); none = never
  std::optional<holder_info> info;   ///< from deadbolt run's info key, if the holder is deadbolt
};

struct lock_state {
  std::string type = "none";         ///< the key's Redis type
  std::string mode;                  ///< a read/write lock's "read" or "write"
  std::string value;                 ///< a string key's value (semaphore, latch)
  long long ttl_ms = -2;
  std::vector<lock_holder> holders;  ///< lock owners, or an expirable semaphore's acquired permits
  std::vector<std::string> queue;    ///< fair lock waiters
  std::optional<std::int64_t> token; ///< fencing token counter
  bool has_permits = false;          ///< the {name}:timeout ZSET of a permit-expirable semaphore exists
};

/// "lock", "fair_lock", "fenced_lock", "read_write_lock", "expirable_semaphore", "semaphore_or_latch",
/// "none", or "other" (a key of another type). A fair or fenced lock is told from a plain one by its
/// queue or token key; the data alone cannot tell a semaphore's count from a latch's.
std::string kind_of(const lock_state& s);

void print_text(const std::string& name, const lock_state& s);
void print_json(const std::string& name, const lock_state& s);

}  // namespace deadbolt::cli
