// A replica promoted while its old master has not heard of it yet, on a real cluster of one master and
// one replica (its own fixture). The cluster bus runs through two proxies (each node announces a
// proxy's port as its bus port), which the test freezes: the nodes no longer hear each other, while
// clients reach both. `CLUSTER FAILOVER TAKEOVER` then promotes the replica, and the old master goes on
// as a master that owns every slot and names the promoted node its replica, as it does for the moment
// after a forced failover before the news reaches it (the verification campaign's
// `cluster:failover-force` gave two holders one token so). A new client that reads the layout from the
// old master and locks there finds no replica listed by its ROLE: in `automatic` mode that meant no
// WAIT, and a grant that no replica has, counted as synced. The replicas the layout names are expected
// now: the client asks the promoted one, finds it a master continued from this master's history, and
// counts nothing written on the old master as synced.
#include <doctest/doctest.h>

#include <chrono>
#include <string>
#include <system_error>
#include <thread>

#include "deadbolt/blocking.hpp"
#include "deadbolt/error.hpp"
#include "support/log_lines.hpp"
#include "support/redis_cluster.hpp"
#include "support/tcp_proxy.hpp"

using namespace std::chrono_literals;

namespace cluster_promoted_replica_test {

template <typename Condition>
bool eventually(Condition condition, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (condition()) return true;
    std::this_thread::sleep_for(50ms);
  }
  return condition();
}

// Whether `node`'s CLUSTER NODES shows the node on `port` with bus port `bus` ("ip:port@bus").
bool knows_bus_port(const deadbolt::test::redis_server& node, std::uint16_t port, std::uint16_t bus) {
  return node.cli("cluster nodes").find(":" + std::to_string(port) + "@" + std::to_string(bus)) != std::string::npos;
}

// ROLE as redis-cli prints it: "master", the offset, then three lines per replica listed.
bool lists_no_replica(const deadbolt::test::redis_server& node) {
  const std::string role = node.cli("role");
  return role.rfind("master", 0) == 0 && role.find('\n') == role.rfind('\n');
}

}  // namespace cluster_promoted_replica_test

using namespace cluster_promoted_replica_test;

TEST_CASE("a replica promoted behind its old master's back: a grant on the old master is not counted as synced") {
  deadbolt::test::redis_cluster cluster;
  REQUIRE(cluster.nodes().size() == 2);
  const auto& old_master = cluster.nodes()[0];
  const auto& replica = cluster.nodes()[1];
  const std::string replica_port = std::to_string(replica.port());
  REQUIRE(eventually([&] { return old_master.cli("role").find(replica_port) != std::string::npos; }, 10s));
  REQUIRE(eventually([&] { return replica.cli("info replication").find("master_link_status:up") != std::string::npos; },
                     10s));

  // Neither node may mark the other failed while the bus is cut (a failed replica is not expected).
  REQUIRE(old_master.cli("config set cluster-node-timeout 60000") == "OK");
  REQUIRE(replica.cli("config set cluster-node-timeout 60000") == "OK");
  deadbolt::test::tcp_proxy master_bus(static_cast<std::uint16_t>(old_master.port() + 10000));
  deadbolt::test::tcp_proxy replica_bus(static_cast<std::uint16_t>(replica.port() + 10000));
  REQUIRE(old_master.cli("config set cluster-announce-bus-port " + std::to_string(master_bus.port())) == "OK");
  REQUIRE(replica.cli("config set cluster-announce-bus-port " + std::to_string(replica_bus.port())) == "OK");
  // Each node learns the other's new bus port from its next ping and reconnects there: through a proxy.
  REQUIRE(eventually([&] { return knows_bus_port(old_master, replica.port(), replica_bus.port()); }, 15s));
  REQUIRE(eventually([&] { return knows_bus_port(replica, old_master.port(), master_bus.port()); }, 15s));
  REQUIRE(eventually([&] { return master_bus.accepted() > 0 && replica_bus.accepted() > 0; }, 15s));
  master_bus.freeze();
  replica_bus.freeze();

  REQUIRE(replica.cli("cluster failover takeover") == "OK");
  REQUIRE(eventually([&] { return replica.cli("role").rfind("master", 0) == 0; }, 10s));
  REQUIRE(eventually([&] { return lists_no_replica(old_master); }, 10s));
  // The old master has not heard: it owns every slot and still names the promoted node its replica.
  REQUIRE(old_master.cli("cluster info").find("cluster_slots_assigned:16384") != std::string::npos);
  const std::string shards = old_master.cli("cluster shards");
  REQUIRE(shards.find(replica_port) != std::string::npos);
  REQUIRE(shards.find("replica") != std::string::npos);
  REQUIRE(old_master.cli("set promoted-replica-probe 1").find("MOVED") == std::string::npos);

  deadbolt::test::log_lines logs;
  deadbolt::config cfg;
  cfg.url = "redis+cluster://127.0.0.1:" + std::to_string(old_master.port()) + "/";  // the layout comes from it
  cfg.command_timeout = 2000ms;
  cfg.replica_sync_retries = 1;
  cfg.replica_sync_retry_delay = 200ms;
  cfg.log = logs.hook();
  deadbolt::blocking_client client(cfg);
  auto lock = client.lock("promoted-replica-lock");
  std::error_code ec;
  const bool acquired = lock.try_lock(ec);
  CHECK_FALSE(acquired);  // before: acquired, on a master whose only replica had left it
  CHECK(ec == deadbolt::errc::replicas_not_synced);
  CHECK(logs.any_contains("is a master now"));
  CHECK(old_master.cli("exists promoted-replica-lock") == "0");  // the unsynced attempt was undone
  if (acquired) lock.unlock(ec);
}
