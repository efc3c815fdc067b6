// inspect's reading of lua/inspect.lua's reply (src/inspect/object_reading.cpp) on hand-made replies:
// the shapes a real server never sends (a broken or hostile one might), and RESP3's aggregate kinds.
#include <doctest/doctest.h>

#include <ostream>  // doctest prints std::error_code through operator<<
#include <string>
#include <utility>
#include <vector>

#include "deadbolt/error.hpp"
#include "inspect/object_reading.hpp"

using deadbolt::errc;
using deadbolt::object_info;
using deadbolt::object_kind;
using deadbolt::reply;
namespace resp = deadbolt::resp;

namespace {

reply text(std::string s) { return {resp::type::blob_string, std::move(s), {}}; }
reply number(std::int64_t v) { return {resp::type::integer, std::to_string(v), {}}; }
reply list(std::vector<reply> elements, resp::type kind = resp::type::array) { return {kind, "", std::move(elements)}; }
reply nil() { return {}; }

// {type, pttl, data, queue, deadlines, token, permits, truncated, permit count}
reply script_reply(std::string type, reply data, reply token = nil(), reply permits = list({})) {
  const auto count = static_cast<std::int64_t>(permits.elements.size() / 2);
  return list({text(std::move(type)), number(-1), std::move(data), list({}), list({}), std::move(token),
               std::move(permits), number(0), number(count)});
}

const std::string owner = "6e3814a1-e847-452b-a982-45baf93a1df2:42";

}  // namespace

TEST_CASE("read_object: replies not of the script's shape are protocol errors, never a guess") {
  object_info info;
  CHECK(deadbolt::detail::read_object(text("hash"), info) == errc::protocol_error);
  CHECK(deadbolt::detail::read_object(list({text("hash"), number(1)}), info) == errc::protocol_error);
  reply no_ttl = script_reply("hash", list({}));
  no_ttl.elements[1] = text("soon");
  CHECK(deadbolt::detail::read_object(no_ttl, info) == errc::protocol_error);
  reply scalar_data = script_reply("hash", text("x"));
  CHECK(deadbolt::detail::read_object(scalar_data, info) == errc::protocol_error);
  CHECK(info.kind == object_kind::none);
  reply error{resp::type::simple_error, "BUSY Redis is busy running a script", {}};
  CHECK(deadbolt::detail::read_object(error, info) == errc::server_busy);
}

TEST_CASE("read_object: lock hashes in RESP3 aggregates, odd fields, a token that is not a number") {
  object_info info;
  REQUIRE_FALSE(deadbolt::detail::read_object(
      script_reply("hash", list({text(owner), text("2")}, resp::type::set), text("abc")), info));
  CHECK(info.kind == object_kind::lock);  // the token is not a number: no token
  REQUIRE(info.holders.size() == 1);
  CHECK(info.holders[0].owner == owner);
  CHECK(info.holders[0].count == 2);
  CHECK_FALSE(info.fencing_token);

  REQUIRE_FALSE(deadbolt::detail::read_object(script_reply("hash", list({text("mode"), text("sideways")})), info));
  CHECK(info.kind == object_kind::other);
  CHECK(info.foreign_field == "mode");

  // A field cut short, a thread id that is not a number, a uuid with a stray character.
  for (const std::string& field : {owner.substr(0, 37), owner.substr(0, 37) + "x", std::string("6e3814a1-e847-452b-a982-45baf93a1dfz:1")}) {
    REQUIRE_FALSE(deadbolt::detail::read_object(script_reply("hash", list({text(field), text("1")})), info));
    CHECK(info.kind == object_kind::other);
    CHECK(info.holders.empty());
  }
}

TEST_CASE("read_object: permits that are not permit ids are left out; scores in any number form") {
  object_info info;
  const std::string raw(16, '\x01');
  reply permits = list({text(raw), text("1.7123456789e12"), text("not an id"), text("5"),
                        text(std::string(32, 'a')), text("922337203685477")});
  REQUIRE_FALSE(deadbolt::detail::read_object(script_reply("string", list({text("1")}), nil(), permits), info));
  CHECK(info.kind == object_kind::expirable_semaphore);
  REQUIRE(info.permits.size() == 2);
  CHECK(info.permit_count == 3);
  CHECK(info.permits[0].expires_ms == 1712345678900);
  CHECK(info.permits[1].id.hex() == std::string(32, 'a'));
  CHECK_FALSE(info.permits[1].expires_ms);
}
