// Redisson's naming rule for the keys and channels beside an object (docs/protocol.md §0): they carry
// the object name's hash tag, so that all of an object's keys fall in one cluster slot. For tools that
// keep keys of their own beside a lock (the deadbolt CLI's holder info); the library builds every
// Redisson name with these.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt {

/// Redisson's prefixName(prefix, name): "prefix:{name}", or "prefix:name" when name already has a '{'.
std::string prefix_name(std::string_view prefix, std::string_view name);
/// Redisson's suffixName(name, suffix): "{name}:suffix", or "name:suffix" when name already has a '{'.
std::string suffix_name(std::string_view name, std::string_view suffix);

}  // namespace deadbolt
