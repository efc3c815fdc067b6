// A replica promoted while its old master has not heard of it yet, on a real cluster of one master and
// one replica (its own fixture; the test joins them). The cluster bus runs through two proxies (each
// node announces a proxy's port as its bus port, and they meet there), which the test freezes: the
// nodes no longer hear each other, while clients reach both. `CLUSTER FAILOVER TAKEOVER` then promotes the replica, and the old master goes on
// as a master that owns every slot and names the promoted node its replica, as it does for the moment
// after a forced failover before the news reaches it (the verification campaign's
// `cluster:failover-force` gave two holders one token so). A new client that reads the layout from the
// old master and locks there finds no replica listed by its ROLE: in `automatic` mode that meant no
// WAIT, and a grant that no replica has, counted as synced. The replicas the layout names are expected
// now: the client asks the promoted one, finds it a master continued from this master's history, and
// counts nothing written on the old master as synced.
#include <doctest/doctest.h>

#include <chrono>
#include <sstream>
#include <string>
#include <system_error>

#include "deadbolt/blocking.hpp"
#include "deadbolt/error.hpp"
#include "support/log_lines.hpp"
#include "support/redis_cluster.hpp"
#include "support/sync.hpp"
#include "support/tcp_proxy.hpp"

using namespace std::chrono_literals;

namespace cluster_promoted_replica_test {

// Whether `node`'s CLUSTER NODES shows the node on `port` with bus port `bus` ("ip:port@bus").
bool knows_bus_port(const deadbolt::test::redis_server& node, std::uint16_t port, std::uint16_t bus) {
  return node.cli("cluster nodes").find(":" + std::to_string(port) + "@" + std::to_string(bus)) != std::string::npos;
}

// Whether `node`'s CLUSTER NODES line for the node on `port` calls it a replica ("slave").
bool replica_line_says_slave(const deadbolt::test::redis_server& node, std::uint16_t port) {
  std::istringstream nodes(node.cli("cluster nodes"));
  for (std::string line; std::getline(nodes, line);) {
    if (line.find(":" + std::to_string(port) + "@") != std::string::npos) return line.find("slave") != std::string::npos;
  }
  return false;
}

// ROLE as redis-cli prints it: "master", the offset, then three lines per replica listed.
bool lists_no_replica(const deadbolt::test::redis_server& node) {
  const std::string role = node.cli("role");
  return role.rfind("master", 0) == 0 && role.find('\n') == role.rfind('\n');
}

}  // namespace cluster_promoted_replica_test

using namespace cluster_promoted_replica_test;
using deadbolt::test::eventually;

TEST_CASE("a replica promoted behind its old master's back: a grant on the old master is not counted as synced") {
  deadbolt::test::redis_cluster cluster;
  REQUIRE(cluster.nodes().size() == 2);
  const auto& old_master = cluster.nodes()[0];  // owns every slot; the fixture left the other one unjoined
  const auto& replica = cluster.nodes()[1];
  const std::string replica_port = std::to_string(replica.port());

  // The cluster bus through proxies from the first packet: each node announces a proxy's port as its
  // bus port, and they meet there, so that no link between them goes around the proxies. Neither may
  // mark the other failed while the bus is cut (a failed replica is not expected).
  deadbolt::test::tcp_proxy master_bus(static_cast<std::uint16_t>(old_master.port() + 10000));
  deadbolt::test::tcp_proxy replica_bus(static_cast<std::uint16_t>(replica.port() + 10000));
  for (const auto* node : {&old_master, &replica}) {
    REQUIRE(node->cli("config set cluster-node-timeout 60000") == "OK");
  }
  REQUIRE(old_master.cli("config set cluster-announce-bus-port " + std::to_string(master_bus.port())) == "OK");
  REQUIRE(replica.cli("config set cluster-announce-bus-port " + std::to_string(replica_bus.port())) == "OK");
  const std::string met = replica.cli("cluster meet 127.0.0.1 " + std::to_string(old_master.port()) + " " +
                                      std::to_string(master_bus.port()));
  if (met != "OK") {  // Redis 6.2's CLUSTER MEET takes no bus port: the nodes would link around the proxies
    MESSAGE("skipped: CLUSTER MEET with a bus port is refused here (" << met << "): Redis 7 or Valkey needed");
    return;
  }
  const std::string master_id = old_master.cli("cluster myid");
  REQUIRE(eventually([&] { return replica.cli("cluster replicate " + master_id) == "OK"; }, 15s, 50ms));
  REQUIRE(eventually([&] { return old_master.cli("role").find(replica_port) != std::string::npos; }, 15s, 50ms));
  REQUIRE(eventually([&] { return replica.cli("info replication").find("master_link_status:up") != std::string::npos; },
                     15s, 50ms));
  // Both ends of the handshake done: each knows the other by its id, the master knows its replica.
  REQUIRE(eventually([&] {
    const std::string nodes = old_master.cli("cluster nodes") + replica.cli("cluster nodes");
    return nodes.find("handshake") == std::string::npos && replica_line_says_slave(old_master, replica.port());
  }, 15s, 50ms));
  REQUIRE(knows_bus_port(old_master, replica.port(), replica_bus.port()));
  // The layout lists a replica only once its master has heard of a replication offset above 0 from it
  // (Redis 7's CLUSTER SLOTS and SHARDS): a write, then its next ping.
  REQUIRE(old_master.cli("set promoted-replica-warmup 1") == "OK");
  REQUIRE(eventually([&] { return old_master.cli("cluster slots").find(replica_port) != std::string::npos; }, 15s, 50ms));
  master_bus.freeze();
  replica_bus.freeze();

  REQUIRE(replica.cli("cluster failover takeover") == "OK");
  REQUIRE(eventually([&] { return replica.cli("role").rfind("master", 0) == 0; }, 10s, 50ms));
  REQUIRE(eventually([&] { return lists_no_replica(old_master); }, 10s, 50ms));
  // The old master has not heard: it owns every slot and still names the promoted node its replica
  // (CLUSTER NODES: "id ip:port@bus slave <master id> ...").
  REQUIRE(old_master.cli("cluster info").find("cluster_slots_assigned:16384") != std::string::npos);
  REQUIRE(replica_line_says_slave(old_master, replica.port()));
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
  INFO("the old master's CLUSTER NODES:\n" << old_master.cli("cluster nodes") << "\nits CLUSTER SHARDS:\n" << old_master.cli("cluster shards") << "\nits INFO replication:\n"
       << old_master.cli("info replication") << "\nthe promoted replica's:\n" << replica.cli("info replication")
       << "\nthe client's log:\n" << logs.joined());
  CHECK_FALSE(acquired);  // before: acquired, on a master whose only replica had left it
  CHECK(ec == deadbolt::errc::replicas_not_synced);
  CHECK(logs.any_contains("is a master now"));
  CHECK(old_master.cli("exists promoted-replica-lock") == "0");  // the unsynced attempt was undone
  if (acquired) lock.unlock(ec);
}
