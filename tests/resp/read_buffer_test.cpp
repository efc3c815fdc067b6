#include <doctest/doctest.h>

#include <cstring>
#include <string>

#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/read_buffer.hpp"

using namespace deadbolt::resp;

namespace {

void write(read_buffer& b, std::string_view s) {
  std::size_t room = 0;
  char* p = b.prepare(room);
  REQUIRE(room >= s.size());
  std::memcpy(p, s.data(), s.size());
  b.commit(s.size());
}

}  // namespace

TEST_CASE("bytes written at the back are read from the front") {
  read_buffer b(16);
  write(b, "+OK\r\n");
  CHECK(b.unread() == "+OK\r\n");
  b.consume(3);
  CHECK(b.unread() == "\r\n");
  b.consume(2);
  CHECK(b.unread().empty());
}

TEST_CASE("unread bytes move to the front when the tail runs short") {
  read_buffer b(16);
  write(b, "0123456789ab");
  b.consume(10);
  std::size_t room = 0;
  b.prepare(room);
  CHECK(room == 14);
  CHECK(b.unread() == "ab");
}

TEST_CASE("a full buffer offers no room") {
  read_buffer b(8);
  write(b, "$100\r\nxx");
  CHECK(b.full());
  std::size_t room = 1;
  b.prepare(room);
  CHECK(room == 0);
}

TEST_CASE("decoder and buffer together handle a reply arriving in pieces") {
  read_buffer b(64);
  decoder d;
  write(b, "*2\r\n$3\r\nfo");
  auto r = d.next(b.unread());
  REQUIRE(r.what == parse_result::kind::node);
  b.consume(r.consumed);
  CHECK(d.next(b.unread()).what == parse_result::kind::need_more);
  write(b, "o\r\n:7\r\n");
  r = d.next(b.unread());
  CHECK(r.node.value == "foo");
  b.consume(r.consumed);
  r = d.next(b.unread());
  CHECK(r.node.value == "7");
  CHECK(r.end_of_reply);
}
