// Byte order: what deadbolt puts on the wire and into Redis is the same on a big-endian port (32-bit
// mips, the `mips` preset) as on the little-endian ones. Every expected value here comes from outside
// deadbolt (the RESP spec, Redis's CLUSTER KEYSLOT, FIPS 180's SHA-1 examples, RFC 4122's UUID
// layout), so a little-endian assumption anywhere in the codec, the hash slot function, the
// identifiers or the script hashes (a word loaded with memcpy and compared or hashed as a number, a
// UUID built from integers) fails here when the test runs under qemu-mips.
#include <doctest/doctest.h>

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "base/key_slot.hpp"
#include "deadbolt/permit_id.hpp"
#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "base/ids.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"
#include "support/sha1.hpp"

namespace byte_order_test {

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;

// A 64-bit value whose eight bytes all differ: swapped bytes cannot give it back.
constexpr std::int64_t distinct_bytes = 0x0102030405060708;  // 72623859790382856

bool lower_hex(std::string_view s) {
  for (char c : s) {
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  }
  return true;
}

}  // namespace byte_order_test

using namespace byte_order_test;

TEST_CASE("byte order: the encoder writes lengths and integers as decimal text, most significant digit first") {
  std::string out;
  resp::encoder e(out);
  e.command("SET", distinct_bytes, std::string(300, 'x'), std::int32_t{-16909060}, std::uint16_t{0x0102});
  CHECK(out.substr(0, 37) == "*5\r\n$3\r\nSET\r\n$17\r\n72623859790382856\r\n");
  CHECK(out.substr(37, 6) == "$300\r\n");
  CHECK(out.substr(37 + 6 + 302) == "$9\r\n-16909060\r\n$3\r\n258\r\n");
}

TEST_CASE("byte order: the decoder finds CRLF, lengths and integers whatever the host's byte order") {
  // Every line ending, length and number below is read by the decoder; the bulk's bytes come back in
  // the order sent.
  const std::string input = std::string("*3\r\n:72623859790382856\r\n$4\r\n\x01\x02\x03\x04\r\n,-1.5e300\r\n");
  resp::decoder d;
  std::string_view rest = input;
  auto r = d.next(rest);
  REQUIRE(r.what == resp::parse_result::kind::node);
  CHECK(r.node.type == resp::type::array);
  CHECK(r.node.size == 3);
  rest.remove_prefix(r.consumed);
  r = d.next(rest);
  REQUIRE(r.what == resp::parse_result::kind::node);
  CHECK(r.node.type == resp::type::integer);
  std::int64_t value = 0;
  REQUIRE(detail::parse_int(r.node.value, value));
  CHECK(value == distinct_bytes);
  rest.remove_prefix(r.consumed);
  r = d.next(rest);
  REQUIRE(r.what == resp::parse_result::kind::node);
  CHECK(r.node.type == resp::type::blob_string);
  CHECK(r.node.value == std::string_view("\x01\x02\x03\x04", 4));
  rest.remove_prefix(r.consumed);
  r = d.next(rest);
  REQUIRE(r.what == resp::parse_result::kind::node);
  CHECK(r.node.type == resp::type::double_type);
  CHECK(r.node.value == "-1.5e300");
  CHECK(r.end_of_reply);
  CHECK(r.consumed == rest.size());
  // The most negative integer, and a number's text written back as the client would send it.
  resp::decoder d2;
  r = d2.next(":-9223372036854775808\r\n");
  REQUIRE(r.what == resp::parse_result::kind::node);
  REQUIRE(detail::parse_int(r.node.value, value));
  CHECK(value == INT64_MIN);
  CHECK(detail::decimal(distinct_bytes).view() == "72623859790382856");
  CHECK(detail::decimal(-distinct_bytes).view() == "-72623859790382856");
}

TEST_CASE("byte order: hash slots are Redis's (CLUSTER KEYSLOT) on every port") {
  CHECK(detail::crc16("123456789") == 0x31C3);  // the check value of CRC16-XMODEM (Redis Cluster spec)
  CHECK(detail::crc16(std::string_view("\x01\x02\x03\x04\xfe\xff", 6)) == 0x6801);
  CHECK(detail::key_slot("foo") == 12182);
  CHECK(detail::key_slot("bar") == 5061);
  CHECK(detail::key_slot("hello") == 866);
  CHECK(detail::key_slot("somekey") == 11058);
  CHECK(detail::key_slot("{user1000}.following") == 3443);
  CHECK(detail::key_slot("orders:42") == 11414);
  CHECK(detail::key_slot("redisson_lock__channel:{orders:42}") == 11414);
}

TEST_CASE("byte order: identifiers keep their bytes in order") {
  // RFC 4122: the version nibble is the 13th hex digit, the variant the 17th, wherever the bytes came from.
  for (int i = 0; i < 32; ++i) {
    const std::string uuid = detail::random_uuid();
    REQUIRE(uuid.size() == 36);
    CHECK(uuid[8] == '-');
    CHECK(uuid[13] == '-');
    CHECK(uuid[14] == '4');
    CHECK(std::string_view("89ab").find(uuid[19]) != std::string_view::npos);
    const std::string id = detail::random_request_id();
    CHECK(id.size() == 32);
    CHECK(lower_hex(id));
  }
  // A permit id: the raw bytes stored in Redis, and its hex text, are in the same order.
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(i + 1);
  const deadbolt::permit_id permit(bytes);
  CHECK(permit.hex() == "0102030405060708090a0b0c0d0e0f10");
  CHECK(permit.raw() == std::string_view("\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10", 16));
  const auto parsed = deadbolt::permit_id::from_hex("0102030405060708090A0B0C0D0E0F10");
  REQUIRE(parsed);
  CHECK(*parsed == permit);
}

TEST_CASE("byte order: every embedded script's SHA1 is its body's, as the server computes it") {
  // The test's SHA-1 against FIPS 180's examples first (one block, empty, two blocks).
  CHECK(deadbolt::test::sha1_hex("abc") == "a9993e364706816aba3e25717850c26c9cd0d89d");
  CHECK(deadbolt::test::sha1_hex("") == "da39a3ee5e6b4b0d3255bfef95601890afd80709");
  CHECK(deadbolt::test::sha1_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "84983e441c3bd26ebaae4aa1f95129e5e54670f1");
  for (const auto* s : detail::scripts::all) {
    INFO("script ", std::string(s->name));
    CHECK(s->sha1.size() == 40);
    CHECK(lower_hex(s->sha1));
    CHECK(s->sha1 == deadbolt::test::sha1_hex(s->body));
  }
}
