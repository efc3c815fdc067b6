// Least privilege on a real cluster (include/deadbolt/acl.hpp): a user with exactly acl_grants' rules for
// a cluster (CLUSTER SHARDS/SLOTS, the PUBSUB SHARDNUMSUB probe, SSUBSCRIBE/SPUBLISH as well as the classic
// commands under the default pub/sub mode, WAIT for the masters' replicas) takes a reentrant and a fair
// lock, with a waiter woken by the unlock, and no node's ACL LOG names the user. ACL users are per node:
// the rule is given to every node.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/acl.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/acl_log.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;

namespace cluster_acl_test {

// Every entry of `node`'s ACL LOG for `user` ("reason object; ...").
std::string refused(const deadbolt::test::redis_server& node, const std::string& user) {
  return deadbolt::test::refused_in_acl_log(node.cli("acl log 128"), user);
}

TEST_CASE("acl_grants for a cluster: a reentrant and a fair lock, waiters woken, nothing refused on any node") {
  deadbolt::test::redis_cluster cluster;
  const std::string lock_name = deadbolt::test::unique_name("cl-acl-lock");
  const std::string fair_name = deadbolt::test::unique_name("cl-acl-fair");
  deadbolt::acl_options options;
  options.cluster = true;  // and the default pub/sub mode, automatic
  // Before Redis 7 there is no SSUBSCRIBE, which ACL SETUSER refuses to grant ("Unknown command"):
  // the rule for such a cluster names classic pub/sub (docs/acl.md).
  const bool sharded_known = cluster.masters().front().cli("command info ssubscribe").find("ssubscribe") != std::string::npos;
  if (!sharded_known) options.cluster_pubsub = deadbolt::pubsub_mode::classic;
  deadbolt::acl_grants grants;
  grants.add(deadbolt::acl_object::lock, lock_name, options);
  grants.add(deadbolt::acl_object::fair_lock, fair_name, options);
  std::string rule;
  for (const auto& r : grants.rules()) rule += " '" + r + "'";
  for (const auto& node : cluster.nodes()) {
    REQUIRE(node.cli("acl setuser cl-acl-user reset on '>pw' resetkeys resetchannels -@all" + rule) == "OK");
  }
  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);
  cfg.url = "redis+cluster://cl-acl-user:pw@" + cfg.url.substr(std::string("redis+cluster://").size());
  cfg.cluster_pubsub = options.cluster_pubsub;  // the client as the rule was made for
  deadbolt::blocking_client a(cfg);
  deadbolt::blocking_client b(cfg);
  auto waited_for = [&](auto first, auto second) {
    first.lock();
    auto waiting = std::async(std::launch::async, [&] {  // (a blocking lock's owner is its thread)
      const bool got = second.try_lock_for(10s);
      if (got) second.unlock();
      return got;
    });
    std::this_thread::sleep_for(300ms);  // the waiter subscribed
    first.unlock();
    return waiting.get();
  };
  CHECK(waited_for(a.lock(lock_name), b.lock(lock_name)));
  CHECK(waited_for(a.fair_lock(fair_name), b.fair_lock(fair_name)));
  for (const auto& node : cluster.nodes()) {
    CAPTURE(node.port());
    const std::string what = refused(node, "cl-acl-user");
    CHECK_MESSAGE(what.empty(), what);
  }
  for (const auto& node : cluster.nodes()) node.cli("acl deluser cl-acl-user");
}

}  // namespace cluster_acl_test
