// Pub/sub on a real Redis 7 cluster, as Redisson does it (config::cluster_pubsub): sharded by default
// (SSUBSCRIBE on the master of the channel's slot, SPUBLISH in the scripts), classic when asked. The
// waits below are shorter than a waiter's re-check (5 s) and the holder's lease (30 s): only the
// unlock message can end them in time.
#include <doctest/doctest.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <memory>
#include <sstream>
#include <future>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "base/key_slot.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"
#include "support/tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::test::cluster_config;
using deadbolt::test::redis_cluster;
using deadbolt::test::redis_server;
using deadbolt::test::tcp_proxy;
using deadbolt::test::unique_name;

namespace cluster_pubsub_test {

redis_server master_of(const redis_cluster& cluster, const std::string& key) {
  for (const auto& m : cluster.masters()) {
    if (m.cli("get '" + key + "'").find("MOVED") == std::string::npos) return m;
  }
  FAIL("no master owns " << key);
  return cluster.nodes().front();
}

// Whether the cluster's servers have sharded pub/sub (Redis 7+, Valkey): before it, SPUBLISH is an
// unknown command, automatic mode is classic, and the tests of the sharded way do not apply.
bool has_sharded_pubsub(const redis_cluster& cluster) {
  return cluster.masters().front().cli("spublish deadbolt:probe x").find("ERR") == std::string::npos;
}

// For the tests of the sharded way: false, with a message, on a server without it (the server matrix).
bool sharded_pubsub_or_skip(const redis_cluster& cluster) {
  if (has_sharded_pubsub(cluster)) return true;
  MESSAGE("skipped: this server has no sharded pub/sub");
  return false;
}

// The lock's channel, Redisson's name for it.
std::string channel_of(const std::string& name) { return "redisson_lock__channel:{" + name + "}"; }

// The subscriber count `node` reports for `channel`: PUBSUB SHARDNUMSUB or NUMSUB ("<channel>\n<n>").
int subscribers(const redis_server& node, const char* verb, const std::string& channel) {
  const std::string out = node.cli(std::string("pubsub ") + verb + " '" + channel + "'");
  const auto newline = out.rfind('\n');
  return newline == std::string::npos ? -1 : std::atoi(out.c_str() + newline + 1);
}

bool eventually(const std::function<bool()>& condition) {
  for (int i = 0; i < 300; ++i) {
    if (condition()) return true;
    std::this_thread::sleep_for(10ms);
  }
  return condition();
}

// The ids of `client_name`'s command connections to `node`: CLIENT LIST's entries of that name
// that hold no subscription (a RESP3 subscriber is of TYPE normal too).
std::vector<std::string> command_connections(const redis_server& node, const std::string& client_name) {
  std::vector<std::string> ids;
  std::istringstream list(node.cli("client list"));
  for (std::string line; std::getline(list, line);) {
    if (line.find(" name=" + client_name + " ") == std::string::npos) continue;
    if (line.find(" sub=0 ") == std::string::npos || line.find(" ssub=0 ") == std::string::npos) continue;
    ids.push_back(line.substr(3, line.find(' ') - 3));  // "id=N ..."
  }
  return ids;
}

// `condition` holds now or within `limit` (of wall time: each check runs redis-cli).
bool within(std::chrono::milliseconds limit, const std::function<bool()>& condition) {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= until) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

// A waiter on `client` for `name` (held elsewhere) that waits `wait` at most.
std::future<bool> wait_for_lock(deadbolt::blocking_client& client, const std::string& name,
                                std::chrono::milliseconds wait) {
  return std::async(std::launch::async, [&client, name, wait] {
    auto l = client.lock(name);
    std::error_code ec;
    const bool got = l.try_lock_for(wait, std::chrono::milliseconds(30000), ec);
    if (got) l.unlock(ec);
    return got;
  });
}

}  // namespace cluster_pubsub_test

using namespace cluster_pubsub_test;

TEST_CASE("sharded pub/sub (automatic on Redis 7, or asked for): SSUBSCRIBE on the slot's master, SPUBLISH wakes") {
  redis_cluster cluster;
  const bool sharded_here = has_sharded_pubsub(cluster);
  for (const auto mode : {deadbolt::pubsub_mode::automatic, deadbolt::pubsub_mode::sharded}) {
    CAPTURE(static_cast<int>(mode));
    if (!sharded_here && mode == deadbolt::pubsub_mode::sharded) continue;  // asked for, it cannot work
    deadbolt::config cfg = cluster_config(cluster);
    cfg.cluster_pubsub = mode;
    deadbolt::blocking_client holder(cfg), other(cfg);
    const std::string name = unique_name("ps-sharded");
    auto held = holder.lock(name);
    held.lock();
    auto waiter = wait_for_lock(other, name, 3000ms);

    const redis_server owner = master_of(cluster, name);
    if (sharded_here) {
      CHECK(eventually([&] { return subscribers(owner, "shardnumsub", channel_of(name)) == 1; }));
      for (const auto& n : cluster.nodes()) CHECK(subscribers(n, "numsub", channel_of(name)) == 0);
    } else {  // automatic before Redis 7: classic, on one node
      CHECK(eventually([&] {
        int total = 0;
        for (const auto& n : cluster.nodes()) total += subscribers(n, "numsub", channel_of(name));
        return total == 1;
      }));
    }

    held.unlock();  // SPUBLISH on the owner
    REQUIRE(waiter.wait_for(10s) == std::future_status::ready);
    CHECK(waiter.get());
  }
}

TEST_CASE("a peer that unlocks with a plain DEL and SPUBLISH (a Java client in sharded mode) wakes the waiter") {
  redis_cluster cluster;
  if (!sharded_pubsub_or_skip(cluster)) return;
  deadbolt::blocking_client other(cluster_config(cluster));
  const std::string name = unique_name("ps-peer");
  const redis_server owner = master_of(cluster, name);
  REQUIRE(owner.cli("hset '" + name + "' peer-uuid:1 1") == "1");
  REQUIRE(owner.cli("pexpire '" + name + "' 30000") == "1");
  auto waiter = wait_for_lock(other, name, 3000ms);
  REQUIRE(eventually([&] { return subscribers(owner, "shardnumsub", channel_of(name)) == 1; }));
  REQUIRE(owner.cli("del '" + name + "'") == "1");
  CHECK(owner.cli("spublish '" + channel_of(name) + "' 0") == "1");  // one subscriber: deadbolt
  REQUIRE(waiter.wait_for(10s) == std::future_status::ready);
  CHECK(waiter.get());
}

TEST_CASE("classic pub/sub when asked for: SUBSCRIBE on a seed, PUBLISH wakes") {
  redis_cluster cluster;
  deadbolt::config cfg = cluster_config(cluster);
  cfg.cluster_pubsub = deadbolt::pubsub_mode::classic;
  deadbolt::blocking_client holder(cfg), other(cfg);
  const std::string name = unique_name("ps-classic");
  auto held = holder.lock(name);
  held.lock();
  auto waiter = wait_for_lock(other, name, 3000ms);
  CHECK(eventually([&] {
    int total = 0;
    for (const auto& n : cluster.nodes()) total += subscribers(n, "numsub", channel_of(name));
    return total == 1;
  }));
  if (has_sharded_pubsub(cluster)) CHECK(subscribers(master_of(cluster, name), "shardnumsub", channel_of(name)) == 0);
  held.unlock();  // PUBLISH: reaches every node
  REQUIRE(waiter.wait_for(10s) == std::future_status::ready);
  CHECK(waiter.get());
}

TEST_CASE("a slot moved while a waiter waits: the shard drops the subscription, it follows to the new master") {
  redis_cluster cluster;
  if (!sharded_pubsub_or_skip(cluster)) return;
  deadbolt::blocking_client holder(cluster_config(cluster)), other(cluster_config(cluster));
  const std::string name = unique_name("ps-move");
  auto held = holder.lock(name);
  held.lock();
  auto waiter = wait_for_lock(other, name, 4000ms);

  const redis_server from = master_of(cluster, name);
  REQUIRE(eventually([&] { return subscribers(from, "shardnumsub", channel_of(name)) == 1; }));
  redis_server to = from;
  for (const auto& m : cluster.masters()) {
    if (m.port() != from.port()) to = m;
  }
  // Move the slot, held lock and all, as a resharding does.
  const std::string slot = std::to_string(deadbolt::detail::key_slot(name));
  const std::string from_id = from.cli("cluster myid"), to_id = to.cli("cluster myid");
  REQUIRE(to.cli("cluster setslot " + slot + " importing " + from_id) == "OK");
  REQUIRE(from.cli("cluster setslot " + slot + " migrating " + to_id) == "OK");
  REQUIRE(from.cli("migrate 127.0.0.1 " + std::to_string(to.port()) + " '" + name + "' 0 5000") == "OK");
  for (const auto& m : cluster.masters()) REQUIRE(m.cli("cluster setslot " + slot + " node " + to_id) == "OK");

  CHECK(eventually([&] { return subscribers(to, "shardnumsub", channel_of(name)) == 1; }));
  CHECK(subscribers(from, "shardnumsub", channel_of(name)) == 0);
  held.unlock();  // MOVED to the new master, which SPUBLISHes
  REQUIRE(waiter.wait_for(10s) == std::future_status::ready);
  CHECK(waiter.get());
  // Checked only now: the woken waiter takes the lock at once, so right after the unlock the key may
  // already be the waiter's. Both releases went to the new master.
  CHECK(to.cli("exists '" + name + "'") == "0");
}

TEST_CASE("the channel table is one for all shards: a full one is a clear error") {
  redis_cluster cluster;
  if (!sharded_pubsub_or_skip(cluster)) return;
  deadbolt::config cfg = cluster_config(cluster);
  deadbolt::blocking_client holder(cfg);
  cfg.max_channels = 2;
  deadbolt::blocking_client other(cfg);
  // Three names on three different masters, all held.
  std::vector<std::string> names;
  std::vector<int> ports;
  for (int i = 0; names.size() < 3 && i < 200; ++i) {
    const std::string name = unique_name("ps-full");
    const int port = master_of(cluster, name).port();
    if (std::find(ports.begin(), ports.end(), port) != ports.end()) continue;
    ports.push_back(port);
    names.push_back(name);
  }
  REQUIRE(names.size() == 3);
  std::vector<deadbolt::blocking_lock> held;
  for (const auto& n : names) {
    held.push_back(holder.lock(n));
    held.back().lock();
  }
  auto first = wait_for_lock(other, names[0], 3000ms), second = wait_for_lock(other, names[1], 3000ms);
  REQUIRE(eventually([&] {
    return subscribers(master_of(cluster, names[0]), "shardnumsub", channel_of(names[0])) == 1 &&
           subscribers(master_of(cluster, names[1]), "shardnumsub", channel_of(names[1])) == 1;
  }));
  auto third = other.lock(names[2]);
  std::error_code ec;
  CHECK_FALSE(third.try_lock_for(2000ms, 30000ms, ec));
  CHECK(ec == deadbolt::errc::channel_table_full);
  for (auto& h : held) h.unlock();
  CHECK(first.get());
  CHECK(second.get());
}

TEST_CASE("a waiter's command connection to the lock's master drops once: its channel stays subscribed, the unlock wakes it") {
  // The channel's place follows the layout, not the health of the command connection to its master:
  // a blip of that connection (CLIENT KILL, it reconnects at once) must not leave the channel
  // unsubscribed, or the waiter hears nothing until the holder's lease runs out or its wait ends.
  redis_cluster cluster;
  if (!sharded_pubsub_or_skip(cluster)) return;
  deadbolt::blocking_client holder(cluster_config(cluster));
  deadbolt::config cfg = cluster_config(cluster);
  cfg.client_name = unique_name("ps-blip-client");  // to find its connections in CLIENT LIST
  deadbolt::blocking_client other(cfg);
  const std::string name = unique_name("ps-blip");
  auto held = holder.lock(name);
  held.lock();
  const redis_server owner = master_of(cluster, name);

  auto waiter = std::async(std::launch::async, [&other, name] {
    auto l = other.lock(name);
    std::error_code ec;
    const bool got = l.try_lock_for(12000ms, 30000ms, ec);
    const auto when = std::chrono::steady_clock::now();
    if (got) l.unlock(ec);
    return std::make_tuple(got, when, ec);
  });
  REQUIRE(eventually([&] { return subscribers(owner, "shardnumsub", channel_of(name)) == 1; }));
  const std::vector<std::string> ids = command_connections(owner, cfg.client_name);
  REQUIRE(ids.size() == 1);
  REQUIRE(owner.cli("client kill id " + ids.front()) == "1");
  REQUIRE(within(1000ms, [&] { return command_connections(owner, cfg.client_name).size() == 1; }));  // back at once

  std::this_thread::sleep_for(1000ms);
  CHECK(within(1000ms, [&] { return subscribers(owner, "shardnumsub", channel_of(name)) == 1; }));
  REQUIRE(waiter.wait_for(0ms) == std::future_status::timeout);  // still waiting
  held.unlock();  // SPUBLISH on the owner
  const auto unlocked = std::chrono::steady_clock::now();
  REQUIRE(waiter.wait_for(15s) == std::future_status::ready);
  const auto [got, when, ec] = waiter.get();
  CHECK_MESSAGE(got, ec.message());
  // Woken by the unlock's message, not by the end of its 12 s wait (a bound with slack, not a speed).
  const auto after_unlock = std::chrono::duration_cast<std::chrono::milliseconds>(when - unlocked);
  CHECK_MESSAGE(after_unlock < 3000ms, "acquired " << after_unlock.count() << " ms after the unlock");
}

// A client whose seeds are proxies in front of the cluster's nodes, each of which goes silent at the
// first command that contains `marker` (a managed service that never answers it).
deadbolt::config silent_on(const redis_cluster& cluster, std::vector<std::unique_ptr<tcp_proxy>>& proxies,
                           const std::string& marker) {
  deadbolt::config cfg = cluster_config(cluster);
  cfg.url = "redis+cluster://";
  for (const auto& n : cluster.nodes()) {
    proxies.push_back(std::make_unique<tcp_proxy>(n.port()));
    proxies.back()->silence_after(marker);
    cfg.url += (proxies.size() > 1 ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(proxies.back()->port());
  }
  cfg.url += "/";
  return cfg;
}

// A lock on `client` works while another client waits for it, and the waiter on `client` is woken by
// the unlock: `verb` (SHARDNUMSUB or NUMSUB) shows how the client subscribed.
void waits_and_wakes(const redis_cluster& cluster, deadbolt::blocking_client& client, const char* verb) {
  deadbolt::blocking_client holder(cluster_config(cluster));
  const std::string name = unique_name("ps-probe");
  auto held = holder.lock(name);
  held.lock();
  auto waiter = wait_for_lock(client, name, 3000ms);
  CHECK(within(2000ms, [&] {
    int total = 0;
    for (const auto& n : cluster.nodes()) total += subscribers(n, verb, channel_of(name));
    return total == 1;
  }));
  held.unlock();
  REQUIRE(waiter.wait_for(10s) == std::future_status::ready);
  CHECK(waiter.get());
}

TEST_CASE("PUBSUB SHARDNUMSUB is asked with a channel: an endpoint that never answers the bare form still works, sharded") {
  // Azure Managed Redis never answers the bare form (no channel).
  redis_cluster cluster;
  if (!sharded_pubsub_or_skip(cluster)) return;
  std::vector<std::unique_ptr<tcp_proxy>> proxies;
  deadbolt::blocking_client client(silent_on(cluster, proxies, "*2\r\n$6\r\nPUBSUB\r\n$11\r\nSHARDNUMSUB\r\n"));
  auto mine = client.lock(unique_name("ps-probe-own"));
  std::error_code ec;
  CHECK_MESSAGE(mine.try_lock(ec), ec.message());  // waited for the layout and the mode
  if (!ec) mine.unlock();
  waits_and_wakes(cluster, client, "shardnumsub");
}

TEST_CASE("the pub/sub probe's answer is bounded: an endpoint that never answers it at all gets classic pub/sub") {
  redis_cluster cluster;
  std::vector<std::unique_ptr<tcp_proxy>> proxies;
  deadbolt::blocking_client client(silent_on(cluster, proxies, "SHARDNUMSUB"));
  auto mine = client.lock(unique_name("ps-probe-own"));
  std::error_code ec;
  // Within command_timeout: two nodes asked, a third of it each, then classic.
  CHECK_MESSAGE(mine.try_lock(ec), ec.message());
  if (!ec) mine.unlock();
  waits_and_wakes(cluster, client, "numsub");
}
