// How many local waiters one pub/sub message wakes: part of a lock kind's protocol, carried out by the
// subscriber. A header of its own, so that the kinds' protocol files do not include the subscriber (and
// with it Asio, whose header statics cost every file that includes them a static initializer).
#pragma once

#include <cstdint>

namespace deadbolt::detail {

/// How many local waiters one message wakes (Redisson's per-kind policy, docs/protocol.md §12).
enum class wake_policy : std::uint8_t {
  one,          ///< lock channels: one waiter per unlock message
  all,          ///< every waiter on the channel
  by_payload,   ///< payload "1" wakes all (write unlock), anything else one
  count,        ///< payload is a count: wake that many (semaphores)
};

}  // namespace deadbolt::detail
