// Redisson's key naming (docs/protocol.md §0) and the random identifiers (client UUID, unlock request id).
#include <doctest/doctest.h>

#include <set>
#include <ostream>  // doctest prints std::error_code through operator<<
#include <string>

#include "base/ids.hpp"
#include "base/keys.hpp"
#include "deadbolt/detail/engine.hpp"

namespace detail = deadbolt::detail;

namespace {

bool lower_hex(char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); }

}  // namespace

TEST_CASE("prefix_name and suffix_name for plain names wrap the name in a hash tag") {
  CHECK(detail::prefix_name("redisson_lock_queue", "myLock") == "redisson_lock_queue:{myLock}");
  CHECK(detail::prefix_name("redisson_lock_timeout", "myLock") == "redisson_lock_timeout:{myLock}");
  CHECK(detail::prefix_name("redisson_rwlock", "myLock") == "redisson_rwlock:{myLock}");
  CHECK(detail::prefix_name("redisson_sc", "mySem") == "redisson_sc:{mySem}");
  CHECK(detail::prefix_name("redisson_lock_token", "myLock") == "redisson_lock_token:{myLock}");
  CHECK(detail::suffix_name("mySem", "timeout") == "{mySem}:timeout");
  CHECK(detail::suffix_name("myLock", "U:42:rwlock_timeout:1") == "{myLock}:U:42:rwlock_timeout:1");
  // A '}' alone does not count: only '{' means "already tagged".
  CHECK(detail::prefix_name("p", "a}b") == "p:{a}b}");
  CHECK(detail::suffix_name("a}b", "s") == "{a}b}:s");
  CHECK(detail::prefix_name("p", "") == "p:{}");
  CHECK(detail::suffix_name("", "s") == "{}:s");
}

TEST_CASE("prefix_name and suffix_name keep a name that already has a '{' as it is") {
  CHECK(detail::prefix_name("redisson_lock__channel", "{user1}:lock") == "redisson_lock__channel:{user1}:lock");
  CHECK(detail::suffix_name("{user1}:lock", "U:42:rwlock_timeout:1") == "{user1}:lock:U:42:rwlock_timeout:1");
  CHECK(detail::prefix_name("p", "a{b") == "p:a{b");
  CHECK(detail::suffix_name("a{b", "s") == "a{b:s");
  CHECK(detail::prefix_name("p", "{") == "p:{");
  CHECK(detail::prefix_name("p", "x:{y}") == "p:x:{y}");
}

TEST_CASE("the reentrant lock's channel and unlock latch prefix (docs/protocol.md worked key table)") {
  CHECK(detail::lock_channel("myLock") == "redisson_lock__channel:{myLock}");
  CHECK(detail::unlock_latch_prefix("myLock") == "redisson_unlock_latch:{myLock}");
  CHECK(detail::lock_channel("{user1}:lock") == "redisson_lock__channel:{user1}:lock");
  CHECK(detail::unlock_latch_prefix("{user1}:lock") == "redisson_unlock_latch:{user1}:lock");
  // Names are bytes: UTF-8 and separators pass through untouched.
  CHECK(detail::lock_channel("caf\xc3\xa9:1") == "redisson_lock__channel:{caf\xc3\xa9:1}");

  const auto names = detail::make_lock_names("orders:42");
  REQUIRE(names);
  CHECK(names->name == "orders:42");  // the lock hash itself is the bare name
  CHECK(names->channel == "redisson_lock__channel:{orders:42}");
  CHECK(names->latch_prefix == "redisson_unlock_latch:{orders:42}");

  const auto tagged = detail::make_lock_names("{user1}:lock");
  REQUIRE(tagged);
  CHECK(tagged->name == "{user1}:lock");
  CHECK(tagged->channel == "redisson_lock__channel:{user1}:lock");
  CHECK(tagged->latch_prefix == "redisson_unlock_latch:{user1}:lock");
}

TEST_CASE("random_uuid is a lowercase version 4 UUID like Java's UUID.toString()") {
  std::set<std::string> seen;
  for (int i = 0; i < 200; ++i) {
    const std::string id = detail::random_uuid();
    INFO("uuid: " << id);
    REQUIRE(id.size() == 36);
    for (std::size_t p = 0; p < id.size(); ++p) {
      if (p == 8 || p == 13 || p == 18 || p == 23) {
        CHECK(id[p] == '-');
      } else {
        CHECK(lower_hex(id[p]));
      }
    }
    CHECK(id[14] == '4');  // version
    const char variant = id[19];
    CHECK((variant == '8' || variant == '9' || variant == 'a' || variant == 'b'));  // IETF variant 10xx
    seen.insert(id);
  }
  CHECK(seen.size() == 200);
}

TEST_CASE("random_request_id is 16 random bytes as 32 lowercase hex characters") {
  std::set<std::string> seen;
  bool any_high_nibble = false;
  for (int i = 0; i < 200; ++i) {
    const std::string id = detail::random_request_id();
    INFO("id: " << id);
    REQUIRE(id.size() == 32);
    for (char c : id) {
      CHECK(lower_hex(c));
      if (c >= 'a') any_high_nibble = true;
    }
    seen.insert(id);
  }
  CHECK(seen.size() == 200);
  CHECK(any_high_nibble);
}
