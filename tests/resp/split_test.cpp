#include <doctest/doctest.h>

#include "cases.hpp"
#include "collect.hpp"

using namespace deadbolt::resp;
using deadbolt::resp::test::decode_all;

TEST_CASE("every reply split at every byte position decodes the same") {
  for (const auto& c : test::reply_cases()) {
    CAPTURE(c.name);
    for (std::size_t cut = 1; cut < c.wire.size(); ++cut) {
      CAPTURE(cut);
      // Two pieces: [0, cut) then the rest.
      decoder d;
      std::string buffer = c.wire.substr(0, cut);
      std::vector<test::owned_node> nodes;
      auto drain = [&] {
        for (;;) {
          auto r = d.next(buffer);
          REQUIRE(r.what != parse_result::kind::error);
          if (r.what == parse_result::kind::need_more) return;
          nodes.push_back({r.node.type, r.node.depth, r.node.size, std::string(r.node.value), r.end_of_reply});
          buffer.erase(0, r.consumed);
        }
      };
      drain();
      buffer += c.wire.substr(cut);
      drain();
      CHECK(buffer.empty());
      CHECK(nodes == c.nodes);
    }
  }
}

TEST_CASE("the whole mix fed one byte at a time decodes the same as all at once") {
  std::string wire;
  for (const auto& c : test::reply_cases()) wire += c.wire;
  const auto whole = decode_all(wire);
  for (std::size_t piece : {1u, 2u, 3u, 7u, 16u}) {
    CAPTURE(piece);
    const auto split = decode_all(wire, piece);
    CHECK_FALSE(split.error);
    CHECK(split.nodes == whole.nodes);
  }
}
