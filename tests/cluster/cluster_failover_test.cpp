// Failover on a real cluster (its own fixture: these tests change who is master). A lock is held and
// another client waits while the lock's master fails over, gracefully (CLUSTER FAILOVER on its
// replica) or because it was SIGKILLed: the holder keeps its hold (it was replicated) and releases it
// on the new master, the waiter gets the lock before its deadline, nothing hangs. A hold the new master
// never received is reported through the lease-lost signal. A shard that stops answering costs only
// its own leases: the other masters' are still renewed. A command redirected to a node whose connection
// is down waits for the layout, and follows the slot to the replica promoted in that node's place.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/log_lines.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;

namespace cluster_failover_test {

deadbolt::config config_for(const deadbolt::test::redis_cluster& cluster) {
  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);
  cfg.watchdog_timeout = 10000ms;  // outlives a failover (node timeout 1.5 s, then the election)
  return cfg;
}

const deadbolt::test::redis_server* master_of(const deadbolt::test::redis_cluster& cluster, const std::string& key) {
  for (const auto& n : cluster.nodes()) {
    if (n.cli("role").rfind("master", 0) == 0 && n.cli("get '" + key + "'").find("MOVED") == std::string::npos) {
      return &n;
    }
  }
  FAIL("no master owns " << key);
  return nullptr;
}

// A replica of `master` (ROLE answers "slave", host, master port, ...).
const deadbolt::test::redis_server* replica_of(const deadbolt::test::redis_cluster& cluster,
                                               const deadbolt::test::redis_server& master) {
  for (const auto& n : cluster.nodes()) {
    std::istringstream role(n.cli("role"));
    std::string kind, host, port;
    role >> kind >> host >> port;
    if (kind == "slave" && port == std::to_string(master.port())) return &n;
  }
  FAIL("no replica of " << master.port());
  return nullptr;
}

bool becomes_master(const deadbolt::test::redis_server& node, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    if (node.cli("role").rfind("master", 0) == 0) return true;
    std::this_thread::sleep_for(50ms);
  }
  return false;
}

struct wait_result {
  bool acquired = false;
  std::error_code ec;
  std::chrono::steady_clock::duration took{};
};

// Another client waits for the lock for up to `wait`, then releases it if it got it.
std::future<wait_result> wait_for_lock(deadbolt::blocking_client& other, const std::string& name,
                                       std::chrono::milliseconds wait) {
  return std::async(std::launch::async, [&other, name, wait] {
    auto lock = other.lock(name);
    wait_result r;
    const auto start = std::chrono::steady_clock::now();
    r.acquired = lock.try_lock_for(wait, 10s, r.ec);
    r.took = std::chrono::steady_clock::now() - start;
    if (r.acquired) lock.unlock();
    return r;
  });
}

// Every node answers and says cluster_state:ok (the cases above kill, pause and restart nodes).
bool cluster_settled(const deadbolt::test::redis_cluster& cluster, std::chrono::milliseconds within) {
  const auto until = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < until) {
    const bool ok = std::all_of(cluster.nodes().begin(), cluster.nodes().end(), [](const auto& n) {
      return n.cli("cluster info", 2).find("cluster_state:ok") != std::string::npos;
    });
    if (ok) return true;
    std::this_thread::sleep_for(100ms);
  }
  return false;
}

// The ids of the connections named `client_name` on `node` (CLIENT LIST: "id=N addr=... name=...").
std::vector<std::string> connections_named(const deadbolt::test::redis_server& node, const std::string& client_name) {
  std::vector<std::string> ids;
  std::istringstream list(node.cli("client list"));
  for (std::string line; std::getline(list, line);) {
    if (line.find(" name=" + client_name + " ") == std::string::npos) continue;
    ids.push_back(line.substr(3, line.find(' ') - 3));
  }
  return ids;
}

// Whether `node` answers a command on `key` with MOVED to the node on `port`.
bool redirects_to(const deadbolt::test::redis_server& node, const std::string& key, std::uint16_t port) {
  const std::string reply = node.cli("get '" + key + "'");
  return reply.find("MOVED") != std::string::npos && reply.find(":" + std::to_string(port)) != std::string::npos;
}

}  // namespace cluster_failover_test

using namespace cluster_failover_test;

TEST_CASE("CLUSTER FAILOVER while a lock is held and a waiter waits: both carry on with the new master") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::test::log_lines logs;
  deadbolt::config holder_cfg = config_for(cluster);
  holder_cfg.log = logs.hook();
  deadbolt::blocking_client holder(holder_cfg), other(config_for(cluster));
  const std::string name = deadbolt::test::unique_name("fo-graceful");
  auto lock = holder.lock(name);
  lock.lock();  // the watchdog keeps it
  const auto* master = master_of(cluster, name);
  const auto* replica = replica_of(cluster, *master);
  REQUIRE(master->cli("wait 1 10000") == "1");  // the replica has the hold

  auto waiter = wait_for_lock(other, name, 15000ms);
  std::this_thread::sleep_for(300ms);  // the waiter is parked
  // A manual failover is aborted if the master and replica do not agree in time (Redis's
  // cluster-manual-failover timeout, 5 s); ask again then, as an operator would.
  bool promoted = false;
  for (int attempt = 0; attempt < 3 && !promoted; ++attempt) {
    REQUIRE(replica->cli("cluster failover") == "OK");
    promoted = becomes_master(*replica, 8s);
  }
  REQUIRE(promoted);
  std::this_thread::sleep_for(4000ms);  // at least one renewal goes to the new master
  CHECK_FALSE(lock.lease_lost());
  // The layout change is logged (info), naming the promoted replica as a slot owner.
  CHECK(logs.any_contains("cluster: layout from "));
  CHECK(logs.any_contains("127.0.0.1:" + std::to_string(replica->port()) + " slots "));
  CHECK(std::stoll(replica->cli("pttl " + name)) > 0);
  std::error_code ec;
  lock.unlock(ec);
  CHECK_FALSE(ec);
  REQUIRE(waiter.wait_for(20s) == std::future_status::ready);
  const wait_result got = waiter.get();
  CHECK(got.acquired);
  CHECK_FALSE(got.ec);
}

TEST_CASE("a SIGKILLed master: the replicated hold survives on the promoted replica, the waiter gets it") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client holder(config_for(cluster)), other(config_for(cluster));
  const std::string name = deadbolt::test::unique_name("fo-kill");
  auto lock = holder.lock(name);
  lock.lock();
  const auto* master = master_of(cluster, name);
  const auto* replica = replica_of(cluster, *master);
  REQUIRE(master->cli("wait 1 10000") == "1");

  auto waiter = wait_for_lock(other, name, 20000ms);
  std::this_thread::sleep_for(300ms);
  master->stop();  // SIGKILL; node timeout 1.5 s, then the replica is elected
  REQUIRE(becomes_master(*replica, 15s));
  // The hold is there, and the holder's watchdog renews it on the new master.
  const long long before = std::stoll(replica->cli("pttl " + name));
  CHECK(before > 0);
  std::this_thread::sleep_for(4000ms);  // a renewal reaches the new master
  CHECK_FALSE(lock.lease_lost());
  std::error_code ec;
  lock.unlock(ec);
  CHECK_FALSE(ec);
  REQUIRE(waiter.wait_for(25s) == std::future_status::ready);
  const wait_result got = waiter.get();
  CHECK(got.acquired);
  CHECK_FALSE(got.ec);
  master->start();  // it rejoins as a replica of the promoted node
}

TEST_CASE("a hold the promoted replica never received is reported lost; another client can take the lock") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::config cfg = config_for(cluster);
  deadbolt::blocking_client holder(cfg), other(cfg);
  std::atomic<int> lost{0};
  holder.on_lease_lost([&](std::string_view, std::int64_t) { ++lost; });
  const std::string name = deadbolt::test::unique_name("fo-lost");
  {
    auto probe = holder.lock(name);  // learn the layout; find the master and its replica
    probe.lock();
    probe.unlock();
  }
  const auto* master = master_of(cluster, name);
  const auto* replica = replica_of(cluster, *master);
  // Cut the replication link while the replica cannot reconnect: the next write exists on the
  // master only (a SIGSTOPed replica alone would still find it in its socket buffer).
  replica->pause();
  REQUIRE(master->cli("client kill type replica") != "0");
  auto lock = holder.lock(name);
  lock.lock();
  REQUIRE(master->cli("exists " + name) == "1");
  master->stop();
  replica->resume();
  REQUIRE(becomes_master(*replica, 15s));
  CHECK(replica->cli("exists " + name) == "0");  // the hold was lost with the master

  // The holder hears it from its watchdog (a renewal every 3.3 s) ...
  const auto until = std::chrono::steady_clock::now() + 15s;
  while (lost.load() == 0 && std::chrono::steady_clock::now() < until) std::this_thread::sleep_for(50ms);
  CHECK(lost.load() == 1);
  CHECK(lock.lease_lost());
  // ... and another client takes the lock.
  auto taker = other.lock(name);
  std::error_code ec;
  CHECK(taker.try_lock_for(5s, 10s, ec));
  CHECK_FALSE(ec);
  taker.unlock();
  lock.unlock(ec);
  CHECK(ec == deadbolt::errc::lease_lost);
  master->start();
}

TEST_CASE("one shard down: the locks on the other masters keep their leases") {
  deadbolt::test::redis_cluster cluster;
  // The other masters keep serving their slots while a shard is down (a cluster left at the default,
  // full coverage, refuses every command then).
  for (const auto& n : cluster.nodes()) REQUIRE(n.cli("config set cluster-require-full-coverage no") == "OK");
  const auto masters = cluster.masters();
  REQUIRE(masters.size() >= 2);
  const auto& down = masters[0];
  const auto& healthy = masters[1];
  std::vector<const deadbolt::test::redis_server*> shard{&down};
  for (const auto& n : cluster.nodes()) {
    std::istringstream role(n.cli("role"));
    std::string kind, host, port;
    role >> kind >> host >> port;
    if (kind == "slave" && port == std::to_string(down.port())) shard.push_back(&n);
  }
  REQUIRE(shard.size() >= 2);  // with its replica paused too, nobody takes its slots over

  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);  // command_timeout 2 s
  cfg.watchdog_timeout = 3000ms;  // renewed every second; a renewal sent to the paused shard waits 2 s
  std::mutex lost_mutex;
  std::vector<std::string> lost;
  deadbolt::blocking_client client(cfg);
  client.on_lease_lost([&](std::string_view name, std::int64_t) {
    std::lock_guard<std::mutex> hold(lost_mutex);
    lost.emplace_back(name);
  });
  auto served_by = [](const deadbolt::test::redis_server& master, const std::string& key) {
    return master.cli("get '" + key + "'").find("MOVED") == std::string::npos;
  };
  // 24 locks in the paused shard's slots (one renewal batch each: one per slot), then one on a
  // healthy master, the last in the watchdog's table.
  std::vector<deadbolt::blocking_lock> on_down;
  while (on_down.size() < 24) {
    const std::string name = deadbolt::test::unique_name("shard-down");
    if (!served_by(down, name)) continue;
    on_down.push_back(client.lock(name));
    on_down.back().lock();
  }
  std::string kept_name;
  do kept_name = deadbolt::test::unique_name("shard-up");
  while (!served_by(healthy, kept_name));
  auto kept = client.lock(kept_name);
  kept.lock();

  struct resume_on_exit {
    const std::vector<const deadbolt::test::redis_server*>& shard;
    const deadbolt::test::redis_cluster& cluster;
    ~resume_on_exit() {
      for (const auto* n : shard) n->resume();
      for (const auto& n : cluster.nodes()) n.cli("config set cluster-require-full-coverage yes", 5);
    }
  } resume{shard, cluster};
  for (const auto* n : shard) n->pause();
  std::this_thread::sleep_for(8000ms);  // over two leases past the last renewal before the pause

  const long long pttl = std::stoll(healthy.cli("pttl " + kept_name));
  CHECK(pttl > 0);
  std::lock_guard<std::mutex> hold(lost_mutex);
  CHECK(std::find(lost.begin(), lost.end(), kept_name) == lost.end());
  CHECK(lost.size() == on_down.size());  // the paused shard's leases are lost, and reported
}

TEST_CASE("a MOVED to a node marked down: the command waits, then follows the slot to the promoted replica") {
  // The client knows the layout; a slot moves to master B behind its back while the client's
  // connection to B is down (cut, its next attempt not due yet); B's replica takes over. The command
  // is sent where the client thinks the slot is and gets MOVED to B. Sent into B's connection, it sat
  // there until that connection's next attempt or its own deadline, following no new layout; it must
  // wait as a route to a down node does, and go where the layout names the slot's master now.
  deadbolt::test::redis_cluster cluster;
  REQUIRE(cluster_settled(cluster, 15000ms));
  deadbolt::config cfg = deadbolt::test::cluster_config(cluster);
  cfg.command_timeout = 3000ms;
  // A dropped connection tries again 10 to 20 s later: B's stays down for the whole case. (A command
  // in the queue of a down connection leaves it when the next attempt fails: for a killed node within
  // the backoff, for a silent host only after connect_timeout. Here it is never before its deadline.)
  cfg.reconnect_min = 20000ms;
  cfg.reconnect_max = 20000ms;
  cfg.replica_sync = deadbolt::replica_sync_mode::off;  // about routing, not about WAIT on a new master
  cfg.client_name = deadbolt::test::unique_name("redirect-down-client");  // to find its connection to B
  deadbolt::blocking_client client(cfg);

  // A name on master A whose slot holds no key (SETSLOT ... NODE refuses to give a slot away with keys
  // in it), and a master B with a replica, which will take over.
  std::string name, slot;
  const deadbolt::test::redis_server* from = nullptr;
  for (int i = 0; i < 100 && slot.empty(); ++i) {
    name = deadbolt::test::unique_name("redirect-down");
    from = master_of(cluster, name);
    const std::string s = from->cli("cluster keyslot '" + name + "'");
    if (from->cli("cluster countkeysinslot " + s) == "0") slot = s;
  }
  REQUIRE_FALSE(slot.empty());
  const deadbolt::test::redis_server* to = nullptr;
  for (const auto& n : cluster.nodes()) {
    if (n.port() != from->port() && n.cli("role").rfind("master", 0) == 0) to = &n;
  }
  REQUIRE(to != nullptr);
  const deadbolt::test::redis_server* heir = replica_of(cluster, *to);
  REQUIRE(heir != nullptr);

  // The client learns the layout (the slot on A) and has a connection to B.
  auto lock = client.lock(name);
  REQUIRE(lock.try_lock());
  lock.unlock();
  std::string on_to;
  do on_to = deadbolt::test::unique_name("redirect-down-b");
  while (to->cli("get '" + on_to + "'").find("MOVED") != std::string::npos);
  auto other = client.lock(on_to);
  REQUIRE(other.try_lock());
  other.unlock();

  // The client's connection to B drops: B is marked down, the layout read again (the slot still on A).
  const std::vector<std::string> ids = connections_named(*to, cfg.client_name);
  REQUIRE(ids.size() == 1);
  REQUIRE(to->cli("client kill id " + ids.front()) == "1");
  std::this_thread::sleep_for(300ms);

  // The slot moves from A to B (as a resharding does: B's epoch goes up, so every node takes it),
  // and B's replica learns it, so that it takes the slot over with B's others.
  const std::string from_id = from->cli("cluster myid"), to_id = to->cli("cluster myid");
  REQUIRE(to->cli("cluster setslot " + slot + " importing " + from_id) == "OK");
  REQUIRE(from->cli("cluster setslot " + slot + " migrating " + to_id) == "OK");
  REQUIRE(to->cli("cluster setslot " + slot + " node " + to_id) == "OK");
  for (const auto& m : cluster.masters()) REQUIRE(m.cli("cluster setslot " + slot + " node " + to_id) == "OK");
  REQUIRE(redirects_to(*from, name, to->port()));
  const auto learnt = std::chrono::steady_clock::now() + 5s;
  while (!redirects_to(*heir, name, to->port()) && std::chrono::steady_clock::now() < learnt) {
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE(redirects_to(*heir, name, to->port()));

  // The command goes to A (the client's layout), which answers MOVED to B, down for the client.
  struct outcome {
    bool got = false;
    std::error_code ec;
    std::string on_heir;  // EXISTS on B's replica while held
  };
  auto attempt = std::async(std::launch::async, [&client, name, heir] {
    auto l = client.lock(name);
    outcome o;
    o.got = l.try_lock(o.ec);  // no wait of its own: one command, bounded by command_timeout
    if (o.got) {
      o.on_heir = heir->cli("exists '" + name + "'");
      l.unlock();
    }
    return o;
  });
  std::this_thread::sleep_for(500ms);  // redirected by now
  REQUIRE(heir->cli("cluster failover takeover") == "OK");  // B becomes its replica when it hears
  REQUIRE(becomes_master(*heir, 5s));

  REQUIRE(attempt.wait_for(10s) == std::future_status::ready);
  const outcome o = attempt.get();
  CHECK_MESSAGE(o.got, "try_lock failed: " << o.ec.message());
  CHECK_FALSE(o.ec);
  if (o.got) CHECK(o.on_heir == "1");  // it followed the slot to the promoted replica
}
