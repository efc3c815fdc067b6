#include <doctest/doctest.h>

#include <string>

#include "collect.hpp"

using namespace deadbolt::resp;
using deadbolt::resp::test::decode_all;

namespace {

struct bad_case {
  const char* wire;
  error expected;
};

}  // namespace

TEST_CASE("each kind of malformed input yields its specific error") {
  const bad_case cases[] = {
      {"?what\r\n", error::invalid_type_byte},
      {"\r\n", error::invalid_type_byte},
      {"hello\r\n", error::invalid_type_byte},
      {";3\r\nabc\r\n", error::invalid_type_byte},
      {"$abc\r\n", error::invalid_length},
      {"$\r\n", error::invalid_length},
      {"$-2\r\n", error::invalid_length},
      {"$+5\r\nhello\r\n", error::invalid_length},
      {"*-5\r\n", error::invalid_length},
      {"%-1\r\n", error::invalid_length},
      {"!-1\r\n", error::invalid_length},
      {"$99999999999999999999999\r\n", error::invalid_length},
      {":12a\r\n", error::invalid_integer},
      {":\r\n", error::invalid_integer},
      {":-\r\n", error::invalid_integer},
      {":9223372036854775808\r\n", error::invalid_integer},
      {":-9223372036854775809\r\n", error::invalid_integer},
      {",1.\r\n", error::invalid_double},
      {",abc\r\n", error::invalid_double},
      {",1e\r\n", error::invalid_double},
      {",\r\n", error::invalid_double},
      {"#x\r\n", error::invalid_boolean},
      {"#tt\r\n", error::invalid_boolean},
      {"(12a\r\n", error::invalid_big_number},
      {"(\r\n", error::invalid_big_number},
      {"_x\r\n", error::invalid_null},
      {"=3\r\ntxt\r\n", error::invalid_verbatim},
      {"=5\r\ntxt-x\r\n", error::invalid_verbatim},
      {"+OK\rX", error::missing_crlf},
      {"$3\r\nabcXY", error::missing_crlf},
      {"$3\r\nabc\rX", error::missing_crlf},
      {"$?\r\n", error::unsupported_streamed},
      {"*?\r\n", error::unsupported_streamed},
  };
  for (const auto& c : cases) {
    const std::string wire = c.wire;
    CAPTURE(wire);
    const auto out = decode_all(c.wire);
    CHECK(out.error == c.expected);
    // The same error whatever the split.
    const auto bytewise = decode_all(c.wire, 1);
    CHECK(bytewise.error == c.expected);
  }
}

TEST_CASE("an error in the middle of an aggregate is reported, earlier nodes stand") {
  const auto out = decode_all("*3\r\n:1\r\n:x\r\n:3\r\n");
  CHECK(out.error == error::invalid_integer);
  CHECK(out.nodes.size() == 2);
}

TEST_CASE("the decoder stays failed until reset") {
  decoder d;
  CHECK(d.next("&\r\n").error == error::invalid_type_byte);
  CHECK(d.failed());
  CHECK(d.next("+OK\r\n").error == error::decoder_failed);
  d.reset();
  auto r = d.next("+OK\r\n");
  CHECK(r.what == parse_result::kind::node);
  CHECK(r.end_of_reply);
}

TEST_CASE("a header line that never ends is an error, not a wait") {
  const std::string endless(200, '1');
  CHECK(decode_all(":" + endless).error == error::invalid_length);
  CHECK(decode_all("*" + endless).error == error::invalid_length);
}

TEST_CASE("error codes have readable messages in their own category") {
  const std::error_code ec = error::missing_crlf;
  CHECK(std::string(ec.category().name()) == "deadbolt.resp");
  CHECK(ec.message() == "malformed reply: missing CRLF terminator");
  for (int e = 1; e <= static_cast<int>(error::decoder_failed); ++e) {
    CAPTURE(e);
    CHECK(make_error_code(static_cast<error>(e)).message().find("unknown") == std::string::npos);
  }
}
