// The cluster's sans-I/O parts against a real Redis Cluster (3 masters, 3 replicas): our hash slots
// agree with CLUSTER KEYSLOT, the layout read from CLUSTER SHARDS and CLUSTER SLOTS is the cluster's,
// and a node's real MOVED reply parses to the slot's owner.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "base/key_slot.hpp"
#include "cluster/redirect.hpp"
#include "cluster/slot_map.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/redis_cluster.hpp"
#include "support/sync.hpp"

using deadbolt::test::call;
namespace detail = deadbolt::detail;

namespace {

deadbolt::config config_for_node(const deadbolt::test::redis_server& node) {
  deadbolt::config cfg;
  cfg.url = node.url();
  return cfg;
}

// Keys that exercise the hash-tag rules: braces anywhere, empty tags, nested, binary and UTF-8.
std::vector<std::string> tricky_keys() {
  std::vector<std::string> keys = {"", "{", "}", "{}", "}{", "{{}}", "{a}{b}", "a{b", "a{}b{c}", "{{a}}",
                                   "lock{orders}", "{orders}:lock", "redisson_lock__channel:{orders}",
                                   "\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87", "{\xe9\x94\x81}x", std::string("\0{\0}", 4)};
  std::mt19937 rng(20261123);
  const char alphabet[] = "ab{}:\xff\x01";
  for (int i = 0; i < 400; ++i) {
    std::string k(rng() % 12, ' ');
    for (auto& c : k) c = alphabet[rng() % (sizeof alphabet - 1)];
    keys.push_back(k);
  }
  return keys;
}

}  // namespace

TEST_CASE("our hash slot of every key is the one CLUSTER KEYSLOT answers") {
  deadbolt::test::redis_cluster cluster;
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for_node(cluster.nodes().front()));
  for (const std::string& key : tricky_keys()) {
    auto r = call<deadbolt::reply>([&](auto cb) { c.async_command({"CLUSTER", "KEYSLOT", key}, cb); });
    REQUIRE_FALSE(r.ec);
    INFO("key bytes: " << key.size());
    CHECK(r.value.as_int() == detail::key_slot(key));
  }
}

TEST_CASE("the layout read from CLUSTER SHARDS and CLUSTER SLOTS is the cluster's") {
  deadbolt::test::redis_cluster cluster;
  const auto masters = cluster.masters();
  REQUIRE(masters.size() == 3);
  std::set<int> master_ports;
  for (const auto& m : masters) master_ports.insert(m.port());

  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for_node(cluster.nodes().back()));  // a replica answers too
  for (const char* command : {"SHARDS", "SLOTS"}) {
    INFO(command);
    auto r = call<deadbolt::reply>([&](auto cb) { c.async_command({"CLUSTER", command}, cb); });
    REQUIRE_FALSE(r.ec);
    std::vector<detail::shard_owner> shards;
    const auto ec = std::string(command) == "SHARDS" ? detail::parse_cluster_shards(r.value, "127.0.0.1", shards)
                                                     : detail::parse_cluster_slots(r.value, "127.0.0.1", shards);
    REQUIRE_FALSE(ec);
    REQUIRE(shards.size() == 3);
    detail::slot_table table;
    std::set<int> seen;
    for (std::size_t i = 0; i < shards.size(); ++i) {
      CHECK(shards[i].master.host == "127.0.0.1");
      CHECK(shards[i].master.numeric);
      seen.insert(shards[i].master.port);
      for (const auto& [first, last] : shards[i].ranges) table.assign(first, last, static_cast<std::uint16_t>(i));
    }
    CHECK(seen == master_ports);
    CHECK(table.complete());
    // The owner of a key's slot has the key's slot: it answers GET without redirecting.
    for (const char* key : {"a", "orders", "{user1000}.following"}) {
      const auto& owner = shards[table.node_of(detail::key_slot(key))].master;
      const auto node = std::find_if(masters.begin(), masters.end(), [&](const auto& m) { return m.port() == owner.port; });
      REQUIRE(node != masters.end());
      CHECK(node->cli(std::string("get ") + key).find("MOVED") == std::string::npos);
    }
  }
}

TEST_CASE("a real MOVED reply names the slot and its owner") {
  deadbolt::test::redis_cluster cluster;
  const auto masters = cluster.masters();
  REQUIRE(masters.size() == 3);
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), config_for_node(masters.front()));
  int redirected = 0;
  for (int i = 0; i < 30; ++i) {
    const std::string key = "moved-" + std::to_string(i);
    auto r = call<deadbolt::reply>([&](auto cb) { c.async_command({"GET", key}, cb); });
    if (!r.ec) continue;  // this node owns the slot
    REQUIRE(r.value.is_error());
    const auto moved = detail::parse_redirect(r.value.text, "127.0.0.1");
    REQUIRE_MESSAGE(moved, r.value.text);
    CHECK(moved->what == detail::redirect::kind::moved);
    CHECK(moved->slot == detail::key_slot(key));
    const bool is_master = std::any_of(masters.begin(), masters.end(),
                                       [&](const auto& m) { return m.port() == moved->target.port; });
    CHECK_MESSAGE(is_master, r.value.text);
    ++redirected;
  }
  CHECK(redirected > 0);  // with 3 masters, about 20 of 30 keys live elsewhere
}
