// Locks on a real Redis Cluster (3 masters, 3 replicas) through a redis+cluster:// URL: every request
// reaches the master of its key's slot, waiters are woken across clients, a moved slot is followed,
// and what cannot work says so (bad URLs, a full node table, no reachable seed).
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <set>
#include <string>
#include <thread>

#include "base/key_slot.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::cluster_config;
using deadbolt::test::unique_name;

namespace {

// The master that serves `key` right now (asked of the cluster, not of deadbolt).
deadbolt::test::redis_server owner_of(const deadbolt::test::redis_cluster& cluster, const std::string& key) {
  for (const auto& m : cluster.masters()) {
    if (m.cli("get '" + key + "'").find("MOVED") == std::string::npos) return m;
  }
  FAIL("no master owns " << key);
  return cluster.nodes().front();
}

// Names spread over the three masters.
std::vector<std::string> names_on_every_master(const deadbolt::test::redis_cluster& cluster, const char* base) {
  std::vector<std::string> out;
  std::set<int> ports;
  for (int i = 0; ports.size() < 3 && i < 100; ++i) {
    const std::string name = unique_name(base);
    if (ports.insert(owner_of(cluster, name).port()).second) out.push_back(name);
  }
  REQUIRE(out.size() == 3);
  return out;
}

}  // namespace

TEST_CASE("a reentrant lock on every master: the hash lives on the slot's owner, Redisson's layout") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client bc(cluster_config(cluster));
  for (const std::string& name : names_on_every_master(cluster, "cl-lock")) {
    INFO(name);
    auto lock = bc.lock(name);
    const auto owner = owner_of(cluster, name);
    const auto waits = [&] { return owner.calls_of("wait"); };  // WAITs the slot's owner ran
    const long waits_before = waits();
    lock.lock();
    lock.lock();  // re-entry
    CHECK(waits() - waits_before >= 2);  // replica sync: each acquire waited for the master's replica (one more after a NOSCRIPT)
    CHECK(owner.cli("type " + name) == "hash");
    CHECK(owner.cli("hvals " + name) == "2");
    CHECK(std::stoi(owner.cli("pttl " + name)) > 20000);
    lock.unlock();
    lock.unlock();
    CHECK(owner.cli("exists " + name) == "0");
  }
}

TEST_CASE("every kind works on a cluster") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client bc(cluster_config(cluster));
  const std::string base = unique_name("cl-kinds");

  auto fenced = bc.fenced_lock(base + "-fenced");
  const std::uint64_t t1 = fenced.lock();
  fenced.unlock();
  CHECK(fenced.lock() > t1);
  fenced.unlock();

  auto fair = bc.fair_lock(base + "-fair");
  fair.lock();
  CHECK(owner_of(cluster, base + "-fair").cli("exists " + base + "-fair") == "1");
  fair.unlock();

  auto rw = bc.read_write_lock(base + "-rw");
  rw.lock_shared();
  rw.lock_shared();
  rw.unlock_shared();
  rw.unlock_shared();
  rw.lock();
  rw.unlock();

  std::error_code ec;
  auto sem = bc.semaphore(base + "-sem");
  REQUIRE(sem.try_set_permits(2, ec));
  REQUIRE_FALSE(ec);
  CHECK(sem.try_acquire(2));
  CHECK_FALSE(sem.try_acquire(1));
  sem.release(2);
  CHECK(sem.available_permits(ec) == 2);

  auto latch = bc.count_down_latch(base + "-latch");
  REQUIRE(latch.try_set_count(1, ec));
  auto waiter = std::async(std::launch::async, [&] {
    std::error_code wec;
    latch.await(wec);
    return wec;
  });
  std::this_thread::sleep_for(100ms);
  CHECK(latch.count_down() == 0);
  REQUIRE(waiter.wait_for(5s) == std::future_status::ready);
  CHECK_FALSE(waiter.get());
}

TEST_CASE("a waiter on another client is woken by the unlock, on a cluster") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client holder(cluster_config(cluster)), other(cluster_config(cluster));
  const std::string name = unique_name("cl-wake");
  auto held = holder.lock(name);
  held.lock();
  auto waited = std::async(std::launch::async, [&] {
    auto l = other.lock(name);
    const auto start = std::chrono::steady_clock::now();
    const bool got = l.try_lock_for(20s);
    const auto took = std::chrono::steady_clock::now() - start;
    if (got) l.unlock();
    return std::make_pair(got, took);
  });
  std::this_thread::sleep_for(300ms);
  held.unlock();
  REQUIRE(waited.wait_for(10s) == std::future_status::ready);
  const auto [got, took] = waited.get();
  CHECK(got);
  CHECK(took < 5s);  // woken by the message, not by a re-check after the lease (30 s)
}

TEST_CASE("a slot moved to another master is followed (MOVED), and the lock lands there") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::blocking_client bc(cluster_config(cluster));
  const std::string name = unique_name("cl-moved");
  auto lock = bc.lock(name);
  lock.lock();  // the client now knows the layout
  lock.unlock();

  // Move the (now empty) slot to another master, as a resharding does at its end.
  const auto from = owner_of(cluster, name);
  deadbolt::test::redis_server to = from;
  for (const auto& m : cluster.masters()) {
    if (m.port() != from.port()) to = m;
  }
  const std::string slot = std::to_string(deadbolt::detail::key_slot(name));
  const std::string to_id = to.cli("cluster myid");
  // The old owner first, so that it no longer claims the slot in its gossip; then the new one, whose
  // claim a new config epoch makes win over any older view; then the rest. In list order, the old
  // owner's gossip could reach the new one after its claim and take the slot back before the old
  // owner gave it up (seen once on Valkey 8.0.1: every master answered MOVED).
  REQUIRE(from.cli("cluster setslot " + slot + " node " + to_id) == "OK");
  REQUIRE(to.cli("cluster setslot " + slot + " node " + to_id) == "OK");
  to.cli("cluster bumpepoch");
  for (const auto& m : cluster.masters()) {
    if (m.port() != to.port() && m.port() != from.port()) REQUIRE(m.cli("cluster setslot " + slot + " node " + to_id) == "OK");
  }
  REQUIRE(owner_of(cluster, name).port() == to.port());

  lock.lock();  // sent to the old owner, which answers MOVED
  CHECK(to.cli("exists " + name) == "1");
  CHECK(from.cli("exists " + name) != "1");  // it answers MOVED now
  lock.unlock();
  CHECK(to.cli("exists " + name) == "0");
}

TEST_CASE("bad cluster URLs, a full node table and unreachable seeds are clear errors") {
  deadbolt::endpoint ep;
  for (const char* url : {"redis+cluster://", "redis+cluster://127.0.0.1:7000,", "redis+cluster://127.0.0.1:7000/2",
                          "redis+cluster://127.0.0.1:0", "redis+cluster://,127.0.0.1:7000"}) {
    INFO(url);
    CHECK(deadbolt::parse_url(url, ep) == errc::invalid_url);
  }
  REQUIRE_FALSE(deadbolt::parse_url("redis+cluster://u:p@127.0.0.1:7000,[::1]:7001/", ep));
  CHECK(ep.cluster_seeds.size() == 2);
  CHECK(ep.cluster_seeds[1].host == "::1");
  CHECK(ep.user == "u");

  deadbolt::test::redis_cluster cluster;
  deadbolt::config one_node = cluster_config(cluster);
  one_node.url = "redis+cluster://127.0.0.1:" + std::to_string(cluster.masters().front().port());
  one_node.max_cluster_nodes = 1;  // the layout names three masters
  {
    deadbolt::blocking_client bc(one_node);
    std::error_code ec;
    bc.lock(unique_name("cl-full")).lock(ec);
    CHECK(ec == errc::node_table_full);
  }
  one_node.max_cluster_nodes = 0;
  CHECK(deadbolt::blocking_client(one_node).config_error() == errc::invalid_config);

  deadbolt::config nowhere;
  nowhere.url = "redis+cluster://127.0.0.1:1,127.0.0.1:2";  // closed loopback ports
  nowhere.command_timeout = 500ms;
  nowhere.connect_timeout = 300ms;
  deadbolt::blocking_client bc(nowhere);
  std::error_code ec;
  const auto start = std::chrono::steady_clock::now();
  bc.lock(unique_name("cl-nowhere")).lock(ec);
  CHECK(ec);
  CHECK(std::chrono::steady_clock::now() - start < 10s);  // bounded by the deadline, no hang
}

TEST_CASE("a full node table makes room from nodes the layout does not name (a replica seed)") {
  deadbolt::test::redis_cluster cluster;
  const auto masters = cluster.masters();
  REQUIRE(masters.size() == 3);
  std::string replica_port;
  for (const auto& n : cluster.nodes()) {
    if (n.cli("role").rfind("slave", 0) == 0) replica_port = std::to_string(n.port());
  }
  REQUIRE_FALSE(replica_port.empty());
  deadbolt::config cfg = cluster_config(cluster);
  cfg.url = "redis+cluster://127.0.0.1:" + replica_port;  // the only seed is a replica: it serves no slot
  cfg.max_cluster_nodes = 3;                                // room for the three masters only
  deadbolt::blocking_client bc(cfg);
  for (const std::string& name : names_on_every_master(cluster, "cl-recycle")) {
    INFO(name);
    std::error_code ec;
    auto lock = bc.lock(name);
    REQUIRE(lock.try_lock_for(2s, 10s, ec));
    CHECK_FALSE(ec);
    CHECK(owner_of(cluster, name).cli("exists " + name) == "1");
    lock.unlock(ec);
    CHECK_FALSE(ec);
  }
}

TEST_CASE("a cluster node reached by redis:// says to use redis+cluster://, not a generic server error") {
  deadbolt::test::redis_cluster cluster;
  const auto node = cluster.masters().front();
  std::string elsewhere;  // a name whose slot another master serves: the node answers MOVED
  for (int i = 0; elsewhere.empty() && i < 100; ++i) {
    const std::string name = unique_name("cl-plain-url");
    if (owner_of(cluster, name).port() != node.port()) elsewhere = name;
  }
  REQUIRE_FALSE(elsewhere.empty());
  deadbolt::config cfg = cluster_config(cluster);
  cfg.url = "redis://127.0.0.1:" + std::to_string(node.port());
  deadbolt::blocking_client bc(cfg);
  std::error_code ec;
  CHECK_FALSE(bc.lock(elsewhere).try_lock(ec));
  CHECK_MESSAGE(ec == errc::needs_cluster_url, ec.message());
  CHECK(ec.message().find("redis+cluster://") != std::string::npos);
}
