// SHA-1 (FIPS 180-4) for the tests: what Redis computes for EVALSHA's name of a script. Written byte by
// byte, with the big-endian word order of the standard spelled out (no loads of whole words), so that
// it gives the same digest on every port; tests/core/byte_order_test.cpp checks it against the
// standard's own examples first.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

namespace deadbolt::test {

inline std::string sha1_hex(std::string_view message) {
  std::uint32_t h[5] = {0x67452301u, 0xEFCDAB89u, 0x98BADCFEu, 0x10325476u, 0xC3D2E1F0u};
  auto rotl = [](std::uint32_t x, int n) { return (x << n) | (x >> (32 - n)); };
  // The message, a 1 bit, zeros to 56 bytes mod 64, then the length in bits as a big-endian 64-bit number.
  std::string m(message);
  const std::uint64_t bits = static_cast<std::uint64_t>(message.size()) * 8;
  m += static_cast<char>(0x80);
  while (m.size() % 64 != 56) m += '\0';
  for (int shift = 56; shift >= 0; shift -= 8) m += static_cast<char>((bits >> shift) & 0xff);
  for (std::size_t block = 0; block < m.size(); block += 64) {
    std::uint32_t w[80];
    for (int i = 0; i < 16; ++i) {
      w[i] = 0;
      for (int j = 0; j < 4; ++j) w[i] = (w[i] << 8) | static_cast<unsigned char>(m[block + 4 * i + j]);
    }
    for (int i = 16; i < 80; ++i) w[i] = rotl(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
    std::uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
    for (int i = 0; i < 80; ++i) {
      std::uint32_t f, k;
      if (i < 20) { f = (b & c) | (~b & d); k = 0x5A827999u; }
      else if (i < 40) { f = b ^ c ^ d; k = 0x6ED9EBA1u; }
      else if (i < 60) { f = (b & c) | (b & d) | (c & d); k = 0x8F1BBCDCu; }
      else { f = b ^ c ^ d; k = 0xCA62C1D6u; }
      const std::uint32_t t = rotl(a, 5) + f + e + k + w[i];
      e = d; d = c; c = rotl(b, 30); b = a; a = t;
    }
    h[0] += a; h[1] += b; h[2] += c; h[3] += d; h[4] += e;
  }
  static constexpr char digits[] = "0123456789abcdef";
  std::string out;
  for (std::uint32_t word : h) {
    for (int shift = 28; shift >= 0; shift -= 4) out += digits[(word >> shift) & 0xf];
  }
  return out;
}

}  // namespace deadbolt::test
