// Which of Redis Cluster's 16384 hash slots a key belongs to: CRC16 (XMODEM) of the key's hash tag
// modulo 16384, by Redis's rules (docs/protocol.md §13). Keys that share a tag share a slot, which
// is what lets one script touch a lock's hash, its channel and its timeout keys on a cluster.
#pragma once

#include <cstdint>
#include <string_view>

namespace deadbolt::detail {

inline constexpr std::uint16_t cluster_slot_count = 16384;

/// The part of `key` that is hashed: the text between the first '{' and the first '}' after it when
/// that text is not empty, else the whole key.
std::string_view hash_tag(std::string_view key) noexcept;

/// Whether every key derived from the object name `name` (docs/protocol.md §0: `p:{name}` or `p:name`,
/// `{name}:s` or `name:s`) falls in the name's own slot, so that each script's keys share one slot. It
/// fails only for braces that do not form a hash tag: a '}' without a '{' before it (`a}b`), or an
/// empty or unclosed tag (`{}x`, `x{`).
bool name_fits_one_slot(std::string_view name) noexcept;

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), as Redis computes it.
std::uint16_t crc16(std::string_view bytes) noexcept;

/// The key's hash slot, 0..16383.
inline std::uint16_t key_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16(hash_tag(key)) & (cluster_slot_count - 1));
}

}  // namespace deadbolt::detail
