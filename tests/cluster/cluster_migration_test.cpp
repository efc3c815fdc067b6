// A slot migrating between masters, as `redis-cli --cluster reshard` does it step by step (SETSLOT
// IMPORTING / MIGRATING, MIGRATE of the keys, SETSLOT NODE): while the slot migrates, commands for
// keys already moved are answered ASK and go to the target with ASKING; a multi-key script whose keys
// are split is answered TRYAGAIN and retried; a held lock is released and a new one taken across it.
// While the slot's new owner is told to one node before the other, the two send commands to each
// other (MOVED both ways): the client waits that out; nodes that disagree for good are redirect_loop.
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "base/key_slot.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;

namespace cluster_migration_test {

deadbolt::test::redis_server serving(const deadbolt::test::redis_cluster& cluster, const std::string& key) {
  for (const auto& n : cluster.nodes()) {
    if (n.cli("role").rfind("master", 0) == 0 && n.cli("get '" + key + "'").find("MOVED") == std::string::npos) {
      return n;
    }
  }
  FAIL("no master owns " << key);
  return cluster.nodes().front();
}

}  // namespace cluster_migration_test

using namespace cluster_migration_test;

TEST_CASE("a migrating slot: ASK to the target for moved keys, TRYAGAIN while keys are split, then MOVED") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);
  // The unlock waits out TRYAGAIN until the other thread ends the migration: 0.5 s, then five
  // redis-cli runs, which took over 2.5 s under TSan on a loaded machine. The deadline is not the point.
  cfg.command_timeout = 15000ms;
  deadbolt::blocking_client bc(cfg);
  const std::string tag = deadbolt::test::unique_name("mig");
  const std::string held_name = "{" + tag + "}held", new_name = "{" + tag + "}new";
  auto held = bc.lock(held_name);
  held.lock();  // the client knows the layout; the hash is on the source

  const deadbolt::test::redis_server source = serving(cluster, held_name);
  std::vector<deadbolt::test::redis_server> others;
  for (const auto& m : cluster.masters()) {
    if (m.port() != source.port()) others.push_back(m);
  }
  REQUIRE_FALSE(others.empty());
  const deadbolt::test::redis_server* target = &others.front();
  const std::string slot = std::to_string(deadbolt::detail::key_slot(held_name));
  const std::string source_id = source.cli("cluster myid"), target_id = target->cli("cluster myid");
  REQUIRE(target->cli("cluster setslot " + slot + " importing " + source_id) == "OK");
  REQUIRE(source.cli("cluster setslot " + slot + " migrating " + target_id) == "OK");

  // A key that does not exist on the source: ASK, then ASKING + the script on the target.
  auto fresh = bc.lock(new_name);
  std::error_code ec;
  REQUIRE(fresh.try_lock_for(2s, 30s, ec));
  REQUIRE_FALSE(ec);
  CHECK(target->cli("exists " + new_name).find("ASK") == std::string::npos);  // the target has it...
  CHECK(source.cli("exists " + new_name) != "1");                            // ... the source does not

  // Move the held lock's hash to the target: its unlock (hash + latch keys) now has keys on the target
  // and none on the source, so it goes there with ASKING; the target finds the latch key missing and
  // answers TRYAGAIN until the slot is the target's (then MOVED, or it simply runs).
  REQUIRE(source.cli("migrate 127.0.0.1 " + std::to_string(target->port()) + " '' 0 5000 keys '" + held_name + "'") == "OK");
  // The holder is this thread (the blocking API's owner): the migration ends on another one while the
  // unlock waits out TRYAGAIN.
  auto finish = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(500ms);
    // The new lock's hash is on the target already (created there through ASK): nothing to move.
    const std::string moved =
        source.cli("migrate 127.0.0.1 " + std::to_string(target->port()) + " '' 0 5000 keys '" + new_name + "'");
    // The source first, the target later: meanwhile the source answers MOVED to the target, and the
    // target, still importing, MOVED back to the source (commands without ASKING).
    bool all_ok = source.cli("cluster setslot " + slot + " node " + target_id) == "OK";
    std::this_thread::sleep_for(300ms);
    for (const auto& m : cluster.masters()) {
      if (m.port() != source.port()) all_ok = m.cli("cluster setslot " + slot + " node " + target_id) == "OK" && all_ok;
    }
    return moved + (all_ok ? " setslot ok" : " setslot failed");
  });
  held.unlock(ec);
  CHECK_FALSE(ec);
  REQUIRE(finish.wait_for(20s) == std::future_status::ready);
  CHECK(finish.get() == "NOKEY setslot ok");
  CHECK(target->cli("exists " + held_name) == "0");
  fresh.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(target->cli("exists " + new_name) == "0");
}

TEST_CASE("nodes that keep sending a slot's commands to each other: errc::redirect_loop, then recovery") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);
  cfg.command_timeout = 1000ms;
  deadbolt::blocking_client bc(cfg);

  // A slot with no keys: its owner gives it away only then.
  std::string name, slot;
  deadbolt::test::redis_server owner = cluster.nodes().front();
  for (int tries = 0;; ++tries) {
    REQUIRE(tries < 100);
    name = "{" + deadbolt::test::unique_name("loop") + "}";
    slot = std::to_string(deadbolt::detail::key_slot(name));
    owner = serving(cluster, name);
    if (owner.cli("cluster countkeysinslot " + slot) == "0") break;
  }
  std::vector<deadbolt::test::redis_server> others;
  for (const auto& m : cluster.masters()) {
    if (m.port() != owner.port()) others.push_back(m);
  }
  REQUIRE_FALSE(others.empty());
  const deadbolt::test::redis_server peer = others.front();
  const std::string owner_id = owner.cli("cluster myid"), peer_id = peer.cli("cluster myid");

  // The owner says the peer has the slot, the peer says the owner has it: MOVED both ways, for good
  // (neither claims the slot, so the cluster bus does not settle it).
  REQUIRE(owner.cli("cluster setslot " + slot + " node " + peer_id) == "OK");
  REQUIRE(peer.cli("cluster setslot " + slot + " node " + owner_id) == "OK");
  auto lock = bc.lock(name);
  std::error_code ec;
  CHECK_FALSE(lock.try_lock(ec));
  CHECK(ec == deadbolt::errc::redirect_loop);

  REQUIRE(owner.cli("cluster setslot " + slot + " node " + owner_id) == "OK");
  CHECK(lock.try_lock(ec));
  CHECK_FALSE(ec);
  lock.unlock(ec);
  CHECK_FALSE(ec);
}
