// A permit id's hex form (Redisson's older text form of the id).
#include <array>
#include <optional>
#include <string>
#include <string_view>

#include "deadbolt/permit_id.hpp"

namespace deadbolt {

std::optional<permit_id> permit_id::from_hex(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < 16; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    bytes[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return permit_id(bytes);
}

std::string permit_id::hex() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (std::size_t i = 0; i < 16; ++i) {
    out[2 * i] = digits[bytes_[i] >> 4];
    out[2 * i + 1] = digits[bytes_[i] & 0xf];
  }
  return out;
}

}  // namespace deadbolt
