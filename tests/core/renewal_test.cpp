// How the watchdog's batches are written (src/lock/renewal.cpp), without a server: which holds share
// a script call, how many fit, and the exact command.
#include <doctest/doctest.h>

#include <string>

#include "deadbolt/resp/encoder.hpp"
#include "detail/holds.hpp"
#include "detail/request.hpp"
#include "lock/lock_protocol.hpp"
#include "scripts.hpp"

namespace detail = deadbolt::detail;
using detail::hold_field;

namespace {
struct noop_request final : detail::request {
  void encode(deadbolt::resp::encoder&) override {}
  void on_node(const deadbolt::resp::node&) override {}
  void on_done(std::error_code) override {}
};

detail::hold make_hold(const char* name, std::int64_t owner, hold_field field) {
  detail::hold h;
  h.name = name;
  h.owner = owner;
  h.field = field;
  return h;
}
}  // namespace

TEST_CASE("renewal kinds and batch sizes") {
  CHECK(detail::renewal_kind(hold_field::plain) == hold_field::plain);
  CHECK(detail::renewal_kind(hold_field::write) == hold_field::plain);  // lua/lock_renew.lua renews both
  CHECK(detail::renewal_kind(hold_field::read) == hold_field::read);
  CHECK(detail::renewal_batch_limit(hold_field::plain, 100) == 100);
  CHECK(detail::renewal_batch_limit(hold_field::read, 100) == 50);  // two keys per read hold
}

TEST_CASE("a batch of plain and write holds is one EVALSHA of lock_renew") {
  const auto a = make_hold("a", 1, hold_field::plain);
  const auto b = make_hold("{b}", 2, hold_field::write);
  const detail::hold* holds[] = {&a, &b};
  std::string out;
  deadbolt::resp::encoder e(out);
  noop_request r;
  detail::encode_renewal(e, r, hold_field::plain, holds, 2, "30000", "uuid");
  const std::string sha(detail::scripts::lock_renew.sha1);
  CHECK(out == "*8\r\n$7\r\nEVALSHA\r\n$40\r\n" + sha + "\r\n$1\r\n2\r\n$1\r\na\r\n$3\r\n{b}\r\n$5\r\n30000\r\n" +
                   "$6\r\nuuid:1\r\n$12\r\nuuid:2:write\r\n");
  CHECK(r.runs_script);
}

TEST_CASE("a batch of read holds names each hash and its timeout-key prefix") {
  const auto a = make_hold("a", 1, hold_field::read);
  const detail::hold* holds[] = {&a};
  std::string out;
  deadbolt::resp::encoder e(out);
  noop_request r;
  detail::encode_renewal(e, r, hold_field::read, holds, 1, "30000", "uuid");
  CHECK(out.find("$1\r\na\r\n$25\r\n{a}:uuid:1:rwlock_timeout\r\n$5\r\n30000\r\n$6\r\nuuid:1\r\n") != std::string::npos);
}
