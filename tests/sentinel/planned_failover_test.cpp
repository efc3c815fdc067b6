// The first step of a Sentinel failover, made by hand so that its window is as long as the test needs:
// REPLICAOF NO ONE to one replica (what Sentinel sends the replica it promotes), while the old master
// stays a writable master and its other replica still follows it. A grant there is acknowledged by
// that other replica, whose copy the new master never gets (issue 27: after a planned failover two
// holders at once). Replica sync must not count that acknowledgement: the ROLE after the WAIT shows
// the promoted replica gone, the client asks it, and it answers "master". The fixture is a group of
// its own (a master, 2 replicas, 3 sentinels), as the case turns a replica into a master for a moment.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/log_lines.hpp"
#include "support/redis_sentinel.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::redis_sentinel_group;
using deadbolt::test::redis_server;
using deadbolt::test::unique_name;

namespace planned_failover_test {

/// The ports a master's ROLE lists as its replicas (redis-cli: a line a word).
std::vector<std::string> listed_ports(const redis_server& master) {
  const std::string role = master.cli("role");
  std::vector<std::string> lines;
  for (std::size_t at = 0; at <= role.size();) {
    const auto end = role.find('\n', at);
    lines.push_back(role.substr(at, end == std::string::npos ? std::string::npos : end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  std::vector<std::string> ports;  // "master", offset, then host, port, offset per replica
  for (std::size_t i = 2; i + 1 < lines.size() && lines[0] == "master"; i += 3) ports.push_back(lines[i + 1]);
  return ports;
}

bool lists(const redis_server& master, const redis_server& replica) {
  for (const auto& port : listed_ports(master)) {
    if (port == std::to_string(replica.port())) return true;
  }
  return false;
}

/// `replica` is a master for the scope (REPLICAOF NO ONE), then follows `master` again.
class promoted_by_hand {
 public:
  promoted_by_hand(const redis_server& replica, const redis_server& master) : replica_(replica), master_(master) {
    REQUIRE(replica_.cli("replicaof no one") == "OK");
    REQUIRE(deadbolt::test::eventually([&] { return !lists(master_, replica_); }, 5s));
  }
  ~promoted_by_hand() {
    replica_.cli("replicaof 127.0.0.1 " + std::to_string(master_.port()));
    CHECK(deadbolt::test::eventually([&] { return lists(master_, replica_); }, 10s));
  }

 private:
  redis_server replica_;
  redis_server master_;
};

deadbolt::config synced_config(const redis_sentinel_group& group, deadbolt::test::log_lines& log) {
  deadbolt::config cfg;
  cfg.url = group.url();
  cfg.log = log.hook();
  cfg.connect_timeout = 1000ms;
  cfg.command_timeout = 2000ms;
  cfg.replica_sync_timeout = 300ms;
  cfg.replica_sync_retries = 0;  // an unsynced acquire fails at once: the test needs no pauses
  return cfg;
}

}  // namespace planned_failover_test

using namespace planned_failover_test;

TEST_CASE("replica sync: a grant acknowledged while a replica of the master was promoted is not reported acquired") {
  redis_sentinel_group group;
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  const redis_server master = group.master();
  std::vector<redis_server> replicas;
  for (const auto& node : group.data_nodes()) {
    if (node.port() != master.port()) replicas.push_back(node);
  }
  REQUIRE(replicas.size() == 2);

  deadbolt::test::log_lines log;  // outlives the client
  deadbolt::blocking_client bc(synced_config(group, log));
  REQUIRE_FALSE(bc.connect());
  std::error_code ec;
  {
    auto warm = bc.lock(unique_name("planned-warm"));  // the master's replicas are known from here
    REQUIRE(warm.try_lock_for(2s, 30s, ec));
    REQUIRE_FALSE(ec);
    warm.unlock(ec);
    REQUIRE_FALSE(ec);
  }

  const std::string name = unique_name("planned-window");
  auto lock = bc.lock(name);
  {
    const promoted_by_hand promoted(replicas[0], master);
    REQUIRE(lists(master, replicas[1]));  // the other replica still follows the old master ...
    const bool acquired = lock.try_lock_for(2s, 30s, ec);
    // ... and acknowledges the WAIT: before the fix the lock was reported acquired here, on a master
    // whose promoted replica (the new master, once Sentinel names it) never got it.
    CHECK_FALSE(acquired);
    CHECK(ec == errc::replicas_not_synced);
    CHECK(master.cli("exists " + name) == "0");  // undone: nothing left on the old master
    CHECK(replicas[0].cli("exists " + name) == "0");
    // The client asked the replica that left, and heard that it is a master.
    CHECK(deadbolt::test::eventually(
        [&] { return log.any_contains(std::to_string(replicas[0].port()) + " left this master and is a master now"); },
        5s));
  }
  // Listed by the master again, the replica is a replica: acknowledgements count again.
  REQUIRE(lock.try_lock_for(2s, 30s, ec));
  CHECK_FALSE(ec);
  CHECK(deadbolt::test::eventually([&] { return replicas[0].cli("exists " + name) == "1"; }, 5s));
  lock.unlock(ec);
  CHECK_FALSE(ec);
}

TEST_CASE("replica sync: a client that first connects after the promotion still misses the promoted replica") {
  // The sentinels have not heard of the promotion yet (no failover: by hand), so they name the old
  // master, and with it the replica just promoted: the new connection expects it in the master's list.
  redis_sentinel_group group;
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  const redis_server master = group.master();
  std::vector<redis_server> replicas;
  for (const auto& node : group.data_nodes()) {
    if (node.port() != master.port()) replicas.push_back(node);
  }
  REQUIRE(replicas.size() == 2);
  const std::string name = unique_name("planned-fresh");
  std::error_code ec;
  {
    const promoted_by_hand promoted(replicas[1], master);
    REQUIRE(lists(master, replicas[0]));
    deadbolt::test::log_lines log;
    deadbolt::blocking_client fresh(synced_config(group, log));
    REQUIRE_FALSE(fresh.connect());
    auto lock = fresh.lock(name);
    const bool acquired = lock.try_lock_for(2s, 30s, ec);
    CHECK_FALSE(acquired);  // before: acquired, acknowledged by replicas[0] alone
    CHECK(ec == errc::replicas_not_synced);
    CHECK(master.cli("exists " + name) == "0");
  }
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
}
