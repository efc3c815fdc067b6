#include "base/ids.hpp"

#include <array>

#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {
namespace {

std::array<unsigned char, 16> random_16() {
  std::array<unsigned char, 16> bytes{};
  if (!port::random_bytes(bytes.data(), bytes.size())) port::fatal("no random bytes for an identifier");
  return bytes;
}

void append_hex(std::string& out, unsigned char b) {
  static constexpr char digits[] = "0123456789abcdef";
  out += digits[b >> 4];
  out += digits[b & 0xf];
}

}  // namespace

std::string random_uuid() {
  auto b = random_16();
  b[6] = static_cast<unsigned char>((b[6] & 0x0f) | 0x40);  // version 4
  b[8] = static_cast<unsigned char>((b[8] & 0x3f) | 0x80);  // IETF variant
  std::string out;
  out.reserve(36);
  for (std::size_t i = 0; i < b.size(); ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out += '-';
    append_hex(out, b[i]);
  }
  return out;
}

std::string random_request_id() {
  const auto b = random_16();
  std::string out;
  out.reserve(32);
  for (unsigned char c : b) append_hex(out, c);
  return out;
}

}  // namespace deadbolt::detail
