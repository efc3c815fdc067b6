// Redisson's key and channel naming (docs/protocol.md §0): every auxiliary key carries the lock name's hash
// tag so that it lands in the same cluster slot as the bare name.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt::detail {

/// prefixName(p, name): "p:name" when name already has a '{', else "p:{name}".
std::string prefix_name(std::string_view prefix, std::string_view name);
/// suffixName(name, s): "name:s" when name already has a '{', else "{name}:s".
std::string suffix_name(std::string_view name, std::string_view suffix);

/// redisson_lock__channel:{name}
inline std::string lock_channel(std::string_view name) { return prefix_name("redisson_lock__channel", name); }
/// redisson_unlock_latch:{name} — the unlock script appends ":<request id>".
inline std::string unlock_latch_prefix(std::string_view name) {
  return prefix_name("redisson_unlock_latch", name);
}

}  // namespace deadbolt::detail
