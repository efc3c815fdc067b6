// Redisson's key and channel naming (docs/protocol.md §0): every auxiliary key carries the lock name's hash
// tag so that it lands in the same cluster slot as the bare name. The two helpers are public
// (deadbolt/key_names.hpp); the library's own names are built here.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "deadbolt/key_names.hpp"

namespace deadbolt::detail {

using deadbolt::prefix_name;
using deadbolt::suffix_name;

/// Redisson's score of an expirable semaphore's permit without a lease (its NONEXP; docs/protocol.md §9).
constexpr std::int64_t never_expires = 922337203685477;

/// redisson_lock__channel:{name}
inline std::string lock_channel(std::string_view name) { return prefix_name("redisson_lock__channel", name); }
/// redisson_unlock_latch:{name} — the unlock script appends ":<request id>".
inline std::string unlock_latch_prefix(std::string_view name) {
  return prefix_name("redisson_unlock_latch", name);
}

}  // namespace deadbolt::detail
