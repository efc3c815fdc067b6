// On a cluster one script may only touch one slot: every command each lock kind sends names KEYS of
// one slot for any name whose braces form a hash tag (or that has none), and the names that cannot
// work are recognised. The sync kinds and inspect() are checked against a real cluster
// (tests/cluster/cluster_key_slots_test.cpp).
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/key_slot.hpp"
#include "deadbolt/key_names.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "engine/holds.hpp"
#include "engine/renewal_script.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/request.hpp"

namespace detail = deadbolt::detail;
using detail::lock_kind;

namespace key_slot_test {

struct silent_request final : detail::request {
  void encode(deadbolt::resp::encoder&) override {}
  void on_node(const deadbolt::resp::node&) override {}
  void on_done(std::error_code) override {}
};

// The arguments of one encoded command (an array of bulk strings).
std::vector<std::string> arguments(std::string_view bytes) {
  std::vector<std::string> out;
  REQUIRE(bytes.substr(0, 1) == "*");
  auto line_end = bytes.find("\r\n");
  const int count = std::stoi(std::string(bytes.substr(1, line_end - 1)));
  bytes.remove_prefix(line_end + 2);
  for (int i = 0; i < count; ++i) {
    REQUIRE(bytes.substr(0, 1) == "$");
    line_end = bytes.find("\r\n");
    const auto size = static_cast<std::size_t>(std::stoul(std::string(bytes.substr(1, line_end - 1))));
    out.emplace_back(bytes.substr(line_end + 2, size));
    bytes.remove_prefix(line_end + 2 + size + 2);
  }
  CHECK(bytes.empty());
  return out;
}

// The KEYS of a script call (EVALSHA sha numkeys keys... args...), or the key of a plain command.
std::vector<std::string> keys_of(const std::string& bytes) {
  const std::vector<std::string> args = arguments(bytes);
  REQUIRE(args.size() >= 2);
  if (args[0] != "EVALSHA") return {args[1]};
  const auto n = static_cast<std::size_t>(std::stoul(args[2]));
  REQUIRE(args.size() >= 3 + n);
  return {args.begin() + 3, args.begin() + 3 + static_cast<std::ptrdiff_t>(n)};
}

void check_one_slot(std::string_view name, const std::string& command) {
  INFO("name '" << name << "', command " << command);
  const std::vector<std::string> keys = keys_of(command);
  REQUIRE_FALSE(keys.empty());
  for (const std::string& key : keys) {
    INFO("key '" << key << "'");
    CHECK(detail::key_slot(key) == detail::key_slot(name));
  }
}

// Names whose braces form a hash tag, or that have none: tricky ones included.
const char* const fitting_names[] = {"plain", "orders:42", "{tag}rest", "a{b}c", "{a}{b}", "{{a}}",
                                     "}{a}", "x{y}}", ("\xC3\xBCn\xC3\xAF{c\xC3\xB6" "d\xC3\xA9}"), "with space"};

}  // namespace key_slot_test

using namespace key_slot_test;

TEST_CASE("a name fits one slot unless its braces do not form a hash tag") {
  for (const char* name : fitting_names) {
    INFO(name);
    CHECK(detail::name_fits_one_slot(name));
  }
  for (const char* name : {"a}b", "}", "{}x", "x{", "}{", "{", "{}", "a{}b{c}"}) {
    INFO(name);
    CHECK_FALSE(detail::name_fits_one_slot(name));
  }
  // The rule is exact: a refused name does put its derived keys in other slots.
  for (const char* name : {"a}b", "{}x", "x{", "a{}b{c}"}) {
    INFO(name);
    CHECK(detail::key_slot(deadbolt::prefix_name("redisson_lock__channel", name)) != detail::key_slot(name));
  }
}

TEST_CASE("every command of every lock kind names KEYS of the name's slot") {
  const lock_kind kinds[] = {lock_kind::reentrant, lock_kind::fenced, lock_kind::spin,
                             lock_kind::fair,      lock_kind::read,   lock_kind::write};
  for (const char* name : fitting_names) {
    for (const lock_kind kind : kinds) {
      INFO("kind " << static_cast<int>(kind));
      const auto names = detail::make_lock_names(name, kind);
      const detail::lock_protocol& p = detail::protocol_of(kind);
      const detail::owner_ref who{"0b6a3c1e-uuid", "7"};
      const std::string latch = names->latch_prefix + ":1f2e";
      detail::acquire_call acquire{who, "30000", "5000", "1700000000000", false};
      detail::unlock_call unlock{who, "30000", latch, "10000", "1700000000000", "publish"};
      silent_request r;
      auto encoded = [&](auto&& write) {
        std::string out;
        deadbolt::resp::encoder e(out);
        write(e);
        return out;
      };
      check_one_slot(name, encoded([&](auto& e) { p.acquire(e, r, *names, acquire); }));
      acquire.no_wait = true;
      check_one_slot(name, encoded([&](auto& e) { p.acquire(e, r, *names, acquire); }));
      check_one_slot(name, encoded([&](auto& e) { p.unlock(e, r, *names, unlock); }));
      check_one_slot(name, encoded([&](auto& e) { p.force_unlock(e, r, *names, "1700000000000", "publish"); }));
      check_one_slot(name, encoded([&](auto& e) { p.is_locked(e, r, *names); }));
      check_one_slot(name, encoded([&](auto& e) { p.refresh(e, r, *names, who, "30000"); }));
      if (kind == lock_kind::fair) {
        check_one_slot(name, encoded([&](auto& e) { p.give_up(e, r, *names, acquire, "publish"); }));
      }
    }
  }
}

TEST_CASE("a renewal batch of one name's holds names KEYS of its slot") {
  for (const char* name : fitting_names) {
    for (const detail::hold_field field : {detail::hold_field::plain, detail::hold_field::read}) {
      detail::hold h;
      h.name = name;
      h.owner = 7;
      h.field = field;
      const detail::hold* holds[] = {&h};
      std::string out;
      deadbolt::resp::encoder e(out);
      silent_request r;
      detail::encode_renewal(e, r, field, holds, 1, "30000", "0b6a3c1e-uuid");
      check_one_slot(name, out);
    }
  }
}
