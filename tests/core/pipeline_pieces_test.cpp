// The protocols the pipeline runs around a command, each on its own and without sockets: the NOSCRIPT
// resend and the ASKING prefix (pipeline_test drives them through the pipeline, with replica sync's WAIT).
#include <doctest/doctest.h>

#include <string>
#include <system_error>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/node.hpp"
#include "pipeline/asking_prefix.hpp"
#include "pipeline/noscript_resend.hpp"

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;

namespace {

resp::node top_error(std::string_view text) { return resp::node{resp::type::simple_error, 0, 1, text}; }

}  // namespace

TEST_CASE("noscript_resend: only a top-level NOSCRIPT to a script sent by its hash is swallowed, once") {
  detail::noscript_resend piece;
  piece.submitted();
  piece.encoded();
  CHECK_FALSE(piece.send_body());

  SUBCASE("a request that ran no script hears the NOSCRIPT") {
    CHECK_FALSE(piece.swallows(top_error("NOSCRIPT No matching script."), false));
    CHECK_FALSE(piece.resend_with_body());
  }
  SUBCASE("a NOSCRIPT inside a reply (a script's own result) is the request's") {
    const resp::node nested{resp::type::simple_error, 1, 1, "NOSCRIPT nested"};
    CHECK_FALSE(piece.swallows(nested, true));
    CHECK_FALSE(piece.resend_with_body());
  }
  SUBCASE("other errors are the request's") {
    CHECK_FALSE(piece.swallows(top_error("ERR boom"), true));
    CHECK_FALSE(piece.resend_with_body());
  }
  SUBCASE("the hash's NOSCRIPT sends the body; the body's NOSCRIPT reaches the request; a new submission starts over") {
    CHECK(piece.swallows(top_error("NOSCRIPT No matching script."), true));
    CHECK(piece.resend_with_body());
    CHECK(piece.send_body());
    piece.encoded();
    CHECK_FALSE(piece.swallows(top_error("NOSCRIPT still"), true));  // no loop of resends
    CHECK_FALSE(piece.resend_with_body());
    piece.submitted();
    CHECK_FALSE(piece.send_body());
  }
}

TEST_CASE("asking_prefix: ASKING goes before the command only when asked; its answer must be one whole node") {
  detail::asking_prefix piece;
  std::string out;
  resp::encoder e(out);
  std::error_code ec;

  piece.encode(e, false);
  CHECK(out.empty());
  CHECK_FALSE(piece.takes(resp::node{resp::type::simple_string, 0, 1, "OK"}, true, ec));

  piece.encode(e, true);
  CHECK(out == "*1\r\n$6\r\nASKING\r\n");
  SUBCASE("+OK is ASKING's, and the next reply is the command's") {
    CHECK(piece.takes(resp::node{resp::type::simple_string, 0, 1, "OK"}, true, ec));
    CHECK_FALSE(ec);
    CHECK_FALSE(piece.takes(resp::node{resp::type::blob_string, 0, 1, "value"}, true, ec));
  }
  SUBCASE("an error is ASKING's too (the command then fails on its own)") {
    CHECK(piece.takes(top_error("ERR unknown command"), true, ec));
    CHECK_FALSE(ec);
  }
  SUBCASE("an aggregate where ASKING's +OK belongs: the stream is out of step") {
    CHECK(piece.takes(resp::node{resp::type::array, 0, 2, ""}, false, ec));
    CHECK(ec == deadbolt::errc::protocol_error);
  }
}
