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

/// CRC16-CCITT (XMODEM: polynomial 0x1021, initial value 0), as Redis computes it.
std::uint16_t crc16(std::string_view bytes) noexcept;

/// The key's hash slot, 0..16383.
inline std::uint16_t key_slot(std::string_view key) noexcept {
  return static_cast<std::uint16_t>(crc16(hash_tag(key)) & (cluster_slot_count - 1));
}

}  // namespace deadbolt::detail
