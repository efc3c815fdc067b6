// acl_grants (include/deadbolt/acl.hpp): every command each kind's embedded scripts call is granted (an
// ACL checks the commands a script calls, so a missing one fails only in the branch that calls it, which
// a test on a server may never take), the key and channel patterns are exact, and the text quotes as
// redis-cli reads it. tests/cli/cli_acl_test.sh runs each kind on a real server under these grants.
#include <doctest/doctest.h>

#include <algorithm>
#include <set>
#include <string>
#include <vector>

#include "deadbolt/acl.hpp"
#include "pipeline/script.hpp"
#include "scripts.hpp"

namespace scripts = deadbolt::detail::scripts;
using deadbolt::acl_object;

namespace {

// The commands a script calls by name: redis.call('x' and redis.pcall('x'. A command passed as an
// argument (the publish command) is checked separately.
std::set<std::string> called_by(const deadbolt::detail::script& s) {
  std::set<std::string> out;
  const std::string_view body = s.body;
  for (std::string_view call : {"redis.call('", "redis.pcall('"}) {
    for (auto at = body.find(call); at != std::string_view::npos; at = body.find(call, at + 1)) {
      const auto start = at + call.size();
      out.insert(std::string(body.substr(start, body.find('\'', start) - start)));
    }
  }
  return out;
}

bool publishes(const deadbolt::detail::script& s) {
  const std::string_view body = s.body;
  return body.find("redis.call(publish") != std::string_view::npos || body.find("redis.call(ARGV[") != std::string_view::npos;
}

std::vector<std::string> rules_of(acl_object kind, std::string_view name, const deadbolt::acl_options& o = {}) {
  deadbolt::acl_grants g;
  g.add(kind, name, o);
  return g.rules();
}

bool has(const std::vector<std::string>& rules, const std::string& rule) {
  return std::find(rules.begin(), rules.end(), rule) != rules.end();
}

struct kind_scripts {
  acl_object kind;
  std::vector<const deadbolt::detail::script*> scripts;
};

}  // namespace

TEST_CASE("every command a kind's scripts call is granted, and the publish command when they publish") {
  const std::vector<kind_scripts> table = {
      {acl_object::lock, {&scripts::lock_acquire, &scripts::lock_unlock, &scripts::lock_renew, &scripts::lock_force_unlock}},
      {acl_object::fenced_lock,
       {&scripts::fenced_acquire, &scripts::lock_unlock, &scripts::lock_renew, &scripts::lock_force_unlock}},
      {acl_object::spin_lock, {&scripts::lock_acquire, &scripts::spin_unlock, &scripts::lock_renew}},
      {acl_object::fair_lock,
       {&scripts::fair_acquire, &scripts::fair_try_acquire, &scripts::fair_unlock, &scripts::fair_give_up,
        &scripts::fair_force_unlock, &scripts::lock_renew}},
      {acl_object::read_write_lock,
       {&scripts::read_acquire, &scripts::read_renew, &scripts::read_unlock, &scripts::write_acquire,
        &scripts::write_unlock, &scripts::rw_force_unlock, &scripts::rw_is_locked, &scripts::lock_renew}},
      {acl_object::semaphore,
       {&scripts::semaphore_try_acquire, &scripts::semaphore_release, &scripts::semaphore_try_set,
        &scripts::semaphore_add, &scripts::semaphore_drain}},
      {acl_object::expirable_semaphore,
       {&scripts::permit_acquire, &scripts::permit_release, &scripts::permit_add, &scripts::permit_available,
        &scripts::permit_update_lease, &scripts::semaphore_try_set}},
      {acl_object::count_down_latch, {&scripts::latch_try_set, &scripts::latch_count_down, &scripts::latch_delete}},
  };
  for (const auto& k : table) {
    const auto rules = rules_of(k.kind, "orders");
    CHECK(has(rules, "+evalsha"));
    CHECK(has(rules, "+eval"));  // NOSCRIPT: the body is sent again with EVAL
    for (const auto* s : k.scripts) {
      for (const auto& command : called_by(*s)) {
        INFO("kind " << static_cast<int>(k.kind) << ", script " << s->name);
        CHECK_MESSAGE(has(rules, "+" + command), "not granted: " << command);
      }
      if (publishes(*s)) {
        INFO("script " << s->name);
        CHECK(has(rules, "+publish"));
        CHECK(has(rules, "+subscribe"));
      }
    }
  }
  // inspect() runs lua/inspect.lua.
  deadbolt::acl_options o;
  o.inspect = true;
  const auto rules = rules_of(acl_object::spin_lock, "orders", o);
  for (const auto& command : called_by(scripts::inspect)) CHECK_MESSAGE(has(rules, "+" + command), "not granted: " << command);
}

TEST_CASE("the keys and channels of each kind, as exact patterns") {
  const auto lock = rules_of(acl_object::lock, "orders");
  CHECK(has(lock, "~orders"));
  CHECK(has(lock, "~redisson_lock__channel:{orders}"));  // in the unlock scripts' KEYS
  CHECK(has(lock, "&redisson_lock__channel:{orders}"));
  CHECK(has(lock, "~redisson_unlock_latch:{orders}:*"));
  CHECK_FALSE(has(lock, "+incr"));

  const auto spin = rules_of(acl_object::spin_lock, "orders");
  CHECK(std::none_of(spin.begin(), spin.end(), [](const std::string& r) { return r[0] == '&' || r.find("subscribe") != std::string::npos || r == "+publish"; }));

  const auto fenced = rules_of(acl_object::fenced_lock, "orders");
  CHECK(has(fenced, "~redisson_lock_token:{orders}"));
  CHECK(has(fenced, "+incr"));

  const auto fair = rules_of(acl_object::fair_lock, "orders");
  CHECK(has(fair, "~redisson_lock_queue:{orders}"));
  CHECK(has(fair, "~redisson_lock_timeout:{orders}"));
  CHECK(has(fair, "&redisson_lock__channel:{orders}:*"));

  const auto rw = rules_of(acl_object::read_write_lock, "orders");
  CHECK(has(rw, "~{orders}"));
  CHECK(has(rw, "~{orders}:*:rwlock_timeout*"));
  CHECK(has(rw, "&redisson_rwlock:{orders}"));
  const auto braced = rules_of(acl_object::read_write_lock, "{user1}:lock");
  CHECK(has(braced, "~{user1}:lock:*:rwlock_timeout*"));

  const auto permits = rules_of(acl_object::expirable_semaphore, "jobs");
  CHECK(has(permits, "~{jobs}:timeout"));
  CHECK(has(permits, "&redisson_sc:{jobs}"));
  const auto latch = rules_of(acl_object::count_down_latch, "{user1}:latch");
  CHECK(has(latch, "&redisson_countdownlatch__channel__{{user1}:latch}"));
}

TEST_CASE("options: replica sync, a database, a cluster's pub/sub") {
  deadbolt::acl_options o;
  CHECK(has(rules_of(acl_object::lock, "a", o), "+role"));
  CHECK(has(rules_of(acl_object::lock, "a", o), "+wait"));
  CHECK_FALSE(has(rules_of(acl_object::lock, "a", o), "+select"));
  CHECK_FALSE(has(rules_of(acl_object::lock, "a", o), "+cluster|shards"));
  o.replica_sync = false;
  o.select = true;
  CHECK_FALSE(has(rules_of(acl_object::lock, "a", o), "+wait"));
  CHECK(has(rules_of(acl_object::lock, "a", o), "+select"));
  o.cluster = true;
  o.cluster_pubsub = deadbolt::pubsub_mode::sharded;
  auto sharded = rules_of(acl_object::lock, "a", o);
  CHECK(has(sharded, "+ssubscribe"));
  CHECK(has(sharded, "+spublish"));
  CHECK_FALSE(has(sharded, "+publish"));
  CHECK_FALSE(has(sharded, "+pubsub|shardnumsub"));
  CHECK(has(sharded, "+cluster|shards"));
  CHECK(has(sharded, "+cluster|slots"));
  o.cluster_pubsub = deadbolt::pubsub_mode::automatic;
  auto automatic = rules_of(acl_object::lock, "a", o);
  CHECK(has(automatic, "+pubsub|shardnumsub"));
  CHECK(has(automatic, "+publish"));
  CHECK(has(automatic, "+spublish"));
}

TEST_CASE("glob characters in a name are escaped; the text quotes what redis-cli would split") {
  CHECK(deadbolt::acl_glob_escape("a*b?[c]\\d") == "a\\*b\\?\\[c\\]\\\\d");
  CHECK(deadbolt::acl_glob_escape("my lock\t1") == "my?lock?1");  // ACL SETUSER refuses whitespace
  const auto rules = rules_of(acl_object::spin_lock, "job*1");
  CHECK(has(rules, "~job\\*1"));
  deadbolt::acl_grants g;
  g.add_key_pattern("my lock");
  g.add_key_pattern("a\\*");
  g.add_channel_pattern("q\"\x01");
  CHECK(g.text() == "\"~my lock\" \"~a\\\\*\" \"&q\\\"\\x01\"");
  CHECK(deadbolt::acl_rule(acl_object::spin_lock, "x").rfind("resetkeys resetchannels -@all +evalsha ", 0) == 0);
}
