// A lock's kind and the Redis names it uses, apart from the engine's entry points (deadbolt/detail/
// engine.hpp): the kinds' protocol files include this and not Asio. Not meant to be used directly.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "deadbolt/spin_backoff.hpp"

namespace deadbolt::detail {

/// Which scripts a lock runs and how its waiters wait: one protocol per kind (src/lock/lock_protocol.hpp).
/// reentrant, fenced, spin and fair share the hash layout; read and write are the halves of a
/// read/write lock.
enum class lock_kind { reentrant, fenced, spin, fair, read, write };

class lock_protocol;
/// Each kind's protocol (src/lock/reentrant_protocol.cpp, fair_lock.cpp, read_write_lock.cpp). A lock
/// object names its own when it is made (protocol_for), so a static program links only the kinds it uses.
const lock_protocol& reentrant_protocol();
const lock_protocol& fenced_protocol();
const lock_protocol& spin_protocol();
const lock_protocol& fair_protocol();
const lock_protocol& read_protocol();
const lock_protocol& write_protocol();
template <lock_kind Kind>
const lock_protocol& protocol_for() {
  if constexpr (Kind == lock_kind::fenced) return fenced_protocol();
  if constexpr (Kind == lock_kind::spin) return spin_protocol();
  if constexpr (Kind == lock_kind::fair) return fair_protocol();
  if constexpr (Kind == lock_kind::read) return read_protocol();
  if constexpr (Kind == lock_kind::write) return write_protocol();
  if constexpr (Kind == lock_kind::reentrant) return reentrant_protocol();
}

/// The Redis names one lock uses (docs/protocol.md §0), built once per lock object, its kind and the
/// kind's protocol.
struct lock_names {
  std::string name;          ///< the lock hash: the bare name
  std::string channel;       ///< redisson_lock__channel:{name}; read/write: redisson_rwlock:{name}
  std::string latch_prefix;  ///< redisson_unlock_latch:{name}
  std::string token_key;     ///< redisson_lock_token:{name} (fenced lock)
  std::string queue;         ///< redisson_lock_queue:{name} (fair lock)
  std::string timeouts;      ///< redisson_lock_timeout:{name} (fair lock)
  std::string key_prefix;    ///< {name}, or the name if it has a '{' (read/write lock)
  lock_kind kind = lock_kind::reentrant;
  const lock_protocol* protocol = nullptr;
  spin_backoff backoff;      ///< spin lock: the pause between attempts
};

std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind, const lock_protocol& protocol,
                                                  const spin_backoff& backoff = {});
template <lock_kind Kind>
std::shared_ptr<const lock_names> make_lock_names(std::string_view name, const spin_backoff& backoff = {}) {
  return make_lock_names(name, Kind, protocol_for<Kind>(), backoff);
}
/// The same with the kind known only at run time (links every kind's protocol; tests and tools).
std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind = lock_kind::reentrant,
                                                  const spin_backoff& backoff = {});

}  // namespace deadbolt::detail
