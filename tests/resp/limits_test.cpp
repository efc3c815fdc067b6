#include <doctest/doctest.h>

#include <cstdint>
#include <string>

#include "collect.hpp"

using namespace deadbolt::resp;
using deadbolt::resp::test::decode_all;

namespace {

std::string nested_arrays(std::size_t depth) {
  std::string wire;
  for (std::size_t i = 0; i < depth; ++i) wire += "*1\r\n";
  return wire + ":1\r\n";
}

std::string bulk(std::size_t n) { return "$" + std::to_string(n) + "\r\n" + std::string(n, 'x') + "\r\n"; }

}  // namespace

TEST_CASE("nesting depth limit") {
  limits l;
  l.max_depth = 4;
  CHECK_FALSE(decode_all(nested_arrays(4), 0, l).error);
  CHECK(decode_all(nested_arrays(5), 0, l).error == error::depth_limit_exceeded);
}

TEST_CASE("the depth limit is capped by the fixed stack") {
  limits l;
  l.max_depth = 1000;
  decoder d(l);
  CHECK(d.limits().max_depth == decoder::depth_capacity);
  CHECK(decode_all(nested_arrays(decoder::depth_capacity + 1), 0, l).error == error::depth_limit_exceeded);
}

TEST_CASE("aggregate element limit, maps counted as two elements per pair") {
  limits l;
  l.max_elements = 10;
  CHECK(decode_all("*11\r\n", 0, l).error == error::element_limit_exceeded);
  CHECK(decode_all("%6\r\n", 0, l).error == error::element_limit_exceeded);
  CHECK(decode_all("|6\r\n", 0, l).error == error::element_limit_exceeded);
  // Declared counts are checked before any element arrives: no allocation or wait sized by the peer.
  CHECK(decode_all("*9223372036854775807\r\n", 0, l).error == error::element_limit_exceeded);
  std::string ten = "*10\r\n";
  for (int i = 0; i < 10; ++i) ten += ":1\r\n";
  CHECK_FALSE(decode_all(ten, 0, l).error);
}

TEST_CASE("bulk length limit is checked from the header alone") {
  limits l;
  l.max_bulk_length = 16;
  CHECK_FALSE(decode_all(bulk(16), 0, l).error);
  CHECK(decode_all("$17\r\n", 0, l).error == error::bulk_limit_exceeded);
  CHECK(decode_all("!17\r\n", 0, l).error == error::bulk_limit_exceeded);
  CHECK(decode_all("$9223372036854775807\r\n", 0, l).error == error::bulk_limit_exceeded);
}

TEST_CASE("simple strings and errors obey the bulk length limit, even without CRLF") {
  limits l;
  l.max_bulk_length = 16;
  CHECK_FALSE(decode_all("+" + std::string(16, 'a') + "\r\n", 0, l).error);
  CHECK(decode_all("+" + std::string(17, 'a') + "\r\n", 0, l).error == error::bulk_limit_exceeded);
  CHECK(decode_all("-" + std::string(40, 'a'), 0, l).error == error::bulk_limit_exceeded);
  CHECK(decode_all("(" + std::string(40, '1'), 0, l).error == error::bulk_limit_exceeded);
}

TEST_CASE("total reply size limit") {
  limits l;
  l.max_reply_size = 64;
  std::string small = "*2\r\n" + bulk(10) + bulk(10);
  CHECK_FALSE(decode_all(small, 0, l).error);
  std::string big = "*4\r\n" + bulk(20) + bulk(20) + bulk(20) + bulk(20);
  const auto out = decode_all(big, 0, l);
  CHECK(out.error == error::reply_limit_exceeded);
  // The limit is per reply: many small replies in a row are fine.
  std::string many;
  for (int i = 0; i < 100; ++i) many += small;
  const auto all = decode_all(many, 0, l);
  CHECK_FALSE(all.error);
  CHECK(all.replies == 100);
}

TEST_CASE("the error at the reply size limit does not depend on how the input is split") {
  // Found by fuzz/resp_decoder_fuzz: a partial line near the reply limit failed with
  // reply_limit_exceeded, while the same bytes in one piece reported the line's own error.
  limits l;
  l.max_reply_size = 40;
  const std::string too_long_header = "*2\r\n:1\r\n:" + std::string(70, '1') + "\r\n";
  const std::string bad_terminator = "*2\r\n+" + std::string(40, 'a') + "\rX";
  const std::string fine = "*2\r\n:1\r\n+" + std::string(20, 'a') + "\r\n";
  for (const std::string& wire : {too_long_header, bad_terminator}) {
    CAPTURE(wire);
    CHECK(decode_all(wire, 0, l).error == error::reply_limit_exceeded);
    for (std::size_t piece = 1; piece <= wire.size(); ++piece) {
      CAPTURE(piece);
      CHECK(decode_all(wire, piece, l).error == error::reply_limit_exceeded);
    }
  }
  CHECK_FALSE(decode_all(fine, 1, l).error);
  // Below the reply limit the line's own error stands, whatever the split.
  limits roomy;
  for (std::size_t piece : {0u, 1u, 5u}) {
    CHECK(decode_all(too_long_header, piece, roomy).error == error::invalid_length);
    CHECK(decode_all(bad_terminator, piece, roomy).error == error::missing_crlf);
  }
}

TEST_CASE("limits of SIZE_MAX mean unlimited") {
  // Found by fuzz/resp_decoder_fuzz: max_bulk_length + 1 wrapped to 0, so no line ever completed.
  limits l;
  l.max_depth = SIZE_MAX;
  l.max_elements = SIZE_MAX;
  l.max_bulk_length = SIZE_MAX;
  l.max_reply_size = SIZE_MAX;
  const std::string wire = "*3\r\n+OK\r\n-ERR x\r\n$5\r\nhello\r\n(123\r\n";
  for (std::size_t piece : {0u, 1u, 3u}) {
    CAPTURE(piece);
    const auto out = decode_all(wire, piece, l);
    CHECK_FALSE(out.error);
    CHECK(out.replies == 2);
    CHECK(out.leftover == 0);
    REQUIRE(out.nodes.size() == 5);
    CHECK(out.nodes[1].value == "OK");
    CHECK(out.nodes[2].value == "ERR x");
    CHECK(out.nodes[3].value == "hello");
    CHECK(out.nodes[4].value == "123");
  }
  CHECK(decode_all("$9223372036854775807\r\nabc", 0, l).nodes.empty());
}
