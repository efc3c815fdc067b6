#include <doctest/doctest.h>

#include "cases.hpp"
#include "collect.hpp"

using namespace deadbolt::resp;
using deadbolt::resp::test::decode_all;

TEST_CASE("every RESP2/RESP3 type decodes to the expected nodes") {
  for (const auto& c : test::reply_cases()) {
    CAPTURE(c.name);
    const auto out = decode_all(c.wire);
    CHECK_FALSE(out.error);
    CHECK(out.leftover == 0);
    CHECK(out.replies == 1);
    CHECK(out.nodes == c.nodes);
  }
}

TEST_CASE("pipelined replies decode one after another") {
  std::string wire;
  std::size_t expected_nodes = 0;
  for (const auto& c : test::reply_cases()) {
    wire += c.wire;
    expected_nodes += c.nodes.size();
  }
  const auto out = decode_all(wire);
  CHECK_FALSE(out.error);
  CHECK(out.replies == test::reply_cases().size());
  CHECK(out.nodes.size() == expected_nodes);
}

TEST_CASE("a node is not produced until all its bytes are present") {
  decoder d;
  CHECK(d.next("$5\r\nhel").what == parse_result::kind::need_more);
  CHECK(d.next("$5\r\nhello\r").what == parse_result::kind::need_more);
  CHECK(d.next(":12").what == parse_result::kind::need_more);
  CHECK(d.next(":12\r").what == parse_result::kind::need_more);
  CHECK_FALSE(d.in_reply());
  auto r = d.next("$5\r\nhello\r\n+next");
  REQUIRE(r.what == parse_result::kind::node);
  CHECK(r.consumed == 11);
  CHECK(r.node.value == "hello");
}

TEST_CASE("in_reply tracks an unfinished aggregate") {
  decoder d;
  std::string_view wire = "*2\r\n:1\r\n:2\r\n";
  auto r = d.next(wire);
  CHECK(d.in_reply());
  wire.remove_prefix(r.consumed);
  r = d.next(wire);
  CHECK(d.in_reply());
  wire.remove_prefix(r.consumed);
  r = d.next(wire);
  CHECK(r.end_of_reply);
  CHECK_FALSE(d.in_reply());
}

TEST_CASE("node values point into the caller's buffer") {
  const std::string wire = "$3\r\nabc\r\n";
  decoder d;
  auto r = d.next(wire);
  REQUIRE(r.what == parse_result::kind::node);
  CHECK(r.node.value.data() == wire.data() + 4);
}

TEST_CASE("to_string names every type") {
  CHECK(to_string(type::push) == "push");
  CHECK(to_string(type::double_type) == "double");
  CHECK(is_aggregate(type::map));
  CHECK_FALSE(is_aggregate(type::blob_string));
  CHECK(is_error(type::blob_error));
}
