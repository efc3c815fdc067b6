// The cluster's sans-I/O parts: hash slots, redirections and the slot map read from real replies.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "base/reply_builder.hpp"
#include "base/key_slot.hpp"
#include "cluster/redirect.hpp"
#include "cluster/slot_map.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/resp/decoder.hpp"

namespace detail = deadbolt::detail;
using deadbolt::errc;

namespace {

// The reply tree of one RESP reply written out as bytes.
deadbolt::reply parse(std::string_view bytes) {
  deadbolt::resp::decoder d;
  detail::reply_builder tree;
  while (!bytes.empty()) {
    const auto r = d.next(bytes);
    REQUIRE(r.what == deadbolt::resp::parse_result::kind::node);
    tree.add(r.node);
    bytes.remove_prefix(r.consumed);
  }
  return tree.take();
}

std::string bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }

}  // namespace

TEST_CASE("hash slots: CRC16/XMODEM of the hash tag, as CLUSTER KEYSLOT answers") {
  CHECK(detail::crc16("123456789") == 0x31C3);  // the XMODEM check value
  // Each expected slot is what CLUSTER KEYSLOT of redis-server 7 answered for the key.
  const std::pair<const char*, int> cases[] = {
      {"foo", 12182},         {"bar", 5061},           {"hello", 866},
      {"somekey", 11058},     {"123456789", 12739},    {"{user1000}.following", 3443},
      {"foo{}{bar}", 8363},   {"foo{{bar}}zap", 4015}, {"foo{bar}{zap}", 5061},
      {"{", 4092},            {"{}", 15257},           {"{a}{b}", 15495},
      {"}{x}", 16287},        {"a{b", 13340},          {"\xd0\xba\xd0\xbb\xd1\x8e\xd1\x87", 10303},
  };
  for (const auto& c : cases) {
    INFO(c.first);
    CHECK(detail::key_slot(c.first) == c.second);
  }
  CHECK(detail::hash_tag("foo{bar}{zap}") == "bar");
  CHECK(detail::hash_tag("foo{}{bar}") == "foo{}{bar}");
  CHECK(detail::hash_tag("foo{{bar}}zap") == "{bar");
  // Redisson's channel of a lock named without braces hashes like the lock itself.
  CHECK(detail::key_slot("redisson_lock__channel:{orders}") == detail::key_slot("orders"));
}

TEST_CASE("redirections: MOVED and ASK, IPv4, IPv6, an empty host; anything else is not one") {
  auto moved = detail::parse_redirect("MOVED 3999 127.0.0.1:6381", "127.0.0.9");
  REQUIRE(moved);
  CHECK(moved->what == detail::redirect::kind::moved);
  CHECK(moved->slot == 3999);
  CHECK(moved->target.host == "127.0.0.1");
  CHECK(moved->target.port == 6381);
  CHECK(moved->target.numeric);

  auto ask = detail::parse_redirect("ASK 0 ::1:7000", "");
  REQUIRE(ask);
  CHECK(ask->what == detail::redirect::kind::ask);
  CHECK(ask->target.host == "::1");
  CHECK(ask->target.port == 7000);
  CHECK(ask->target.numeric);

  auto bracketed = detail::parse_redirect("MOVED 16383 [::1]:7001", "");
  REQUIRE(bracketed);
  CHECK(bracketed->slot == 16383);
  CHECK(bracketed->target.host == "::1");

  auto same_host = detail::parse_redirect("MOVED 12 :7002", "127.0.0.5");
  REQUIRE(same_host);
  CHECK(same_host->target.host == "127.0.0.5");
  CHECK(same_host->target.numeric);

  auto named = detail::parse_redirect("MOVED 12 redis-3.internal:7002", "");
  REQUIRE(named);
  CHECK_FALSE(named->target.numeric);

  for (const char* text : {"ERR unknown command", "MOVED", "MOVED 3999", "MOVED 16384 127.0.0.1:1",
                           "MOVED -1 127.0.0.1:1", "MOVED abc 127.0.0.1:1", "MOVED 1 127.0.0.1",
                           "MOVED 1 127.0.0.1:0", "MOVED 1 127.0.0.1:65536", "ASK 1 127.0.0.1:x",
                           "MOVEDX 1 127.0.0.1:1", "CROSSSLOT Keys in request don't hash to the same slot",
                           "MOVED 1 [::1", "MOVED 1 [::1]x:7000"}) {  // brackets as a URL reads them
    INFO("text: \"" << std::string(text) << "\"");
    CHECK_FALSE(detail::parse_redirect(text, "127.0.0.1"));
  }
}

TEST_CASE("the slot map from CLUSTER SHARDS: RESP3 maps and RESP2 arrays, masters only") {
  // Two shards as redis-server 7 answers over RESP3 (a map per shard and per node); the second
  // shard's first node is a failed master, its replica took over.
  std::string node_a = "%7\r\n" + bulk("id") + bulk("a1") + bulk("port") + ":7000\r\n" + bulk("ip") +
                       bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") + bulk("role") + bulk("master") +
                       bulk("replication-offset") + ":10\r\n" + bulk("health") + bulk("online");
  std::string replica_a = "%7\r\n" + bulk("id") + bulk("a2") + bulk("port") + ":7003\r\n" + bulk("ip") +
                          bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") + bulk("role") +
                          bulk("replica") + bulk("replication-offset") + ":10\r\n" + bulk("health") + bulk("online");
  std::string failed_b = "%7\r\n" + bulk("id") + bulk("b1") + bulk("port") + ":7001\r\n" + bulk("ip") +
                         bulk("127.0.0.1") + bulk("endpoint") + bulk("127.0.0.1") + bulk("role") + bulk("master") +
                         bulk("replication-offset") + ":5\r\n" + bulk("health") + bulk("failed");
  std::string promoted_b = "%7\r\n" + bulk("id") + bulk("b2") + bulk("port") + ":7004\r\n" + bulk("ip") +
                           bulk("127.0.0.1") + bulk("endpoint") + bulk("") + bulk("role") + bulk("master") +
                           bulk("replication-offset") + ":5\r\n" + bulk("health") + bulk("online");
  std::string bytes = "*3\r\n";
  bytes += "%2\r\n" + bulk("slots") + "*4\r\n:0\r\n:5460\r\n:10923\r\n:10924\r\n" + bulk("nodes") + "*2\r\n" +
           replica_a + node_a;
  bytes += "%2\r\n" + bulk("slots") + "*2\r\n:5461\r\n:10922\r\n" + bulk("nodes") + "*2\r\n" + failed_b + promoted_b;
  bytes += "%2\r\n" + bulk("slots") + "*0\r\n" + bulk("nodes") + "*0\r\n";  // an empty shard

  std::vector<detail::shard_owner> shards;
  REQUIRE_FALSE(detail::parse_cluster_shards(parse(bytes), "127.0.0.7", shards));
  REQUIRE(shards.size() == 2);
  CHECK(shards[0].master.port == 7000);
  CHECK(shards[0].ranges == std::vector<std::pair<std::uint16_t, std::uint16_t>>{{0, 5460}, {10923, 10924}});
  CHECK(shards[1].master.port == 7004);
  CHECK(shards[1].master.host == "127.0.0.7");  // an empty endpoint: the host that answered

  // RESP2: the same shape with flat key/value arrays.
  std::string resp2 = "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") + "*1\r\n*8\r\n" +
                      bulk("port") + ":7000\r\n" + bulk("endpoint") + bulk("::1") + bulk("role") + bulk("master") +
                      bulk("health") + bulk("online");
  REQUIRE_FALSE(detail::parse_cluster_shards(parse(resp2), "", shards));
  REQUIRE(shards.size() == 1);
  CHECK(shards[0].master.host == "::1");

  // Shapes that are not a layout are protocol errors, never a crash.
  for (std::string bad : {std::string("+OK\r\n"), std::string("*1\r\n:1\r\n"),
                          "*1\r\n%1\r\n" + bulk("slots") + "*1\r\n:0\r\n",
                          "*1\r\n%2\r\n" + bulk("slots") + "*2\r\n:5\r\n:4\r\n" + bulk("nodes") + "*0\r\n",
                          "*1\r\n%2\r\n" + bulk("slots") + "*2\r\n:0\r\n:16384\r\n" + bulk("nodes") + "*0\r\n"}) {
    INFO(bad);
    CHECK(detail::parse_cluster_shards(parse(bad), "", shards) == errc::protocol_error);
  }
}

TEST_CASE("the slot map names each master's replicas: by the address its ROLE lists, failed ones left out") {
  // RESP2, as redis-server 7 answers: the master, a replica whose preferred endpoint is not its ip
  // (cluster-preferred-endpoint-type), one the replying node thinks failed (the server's own word is
  // "fail"), one without a port it could be asked at (TLS only), and the master's replica listed twice.
  const auto node = [](const char* port_field, int port, const char* ip, const char* endpoint, const char* role,
                       const char* health) {
    return "*10\r\n" + bulk(port_field) + ":" + std::to_string(port) + "\r\n" + bulk("ip") + bulk(ip) +
           bulk("endpoint") + bulk(endpoint) + bulk("role") + bulk(role) + bulk("health") + bulk(health);
  };
  std::string bytes = "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") + "*6\r\n" +
                      node("port", 7003, "127.0.0.3", "127.0.0.1", "replica", "online") +
                      node("port", 7000, "127.0.0.9", "127.0.0.1", "master", "online") +
                      node("port", 7004, "127.0.0.1", "127.0.0.1", "replica", "fail") +
                      node("tls-port", 7005, "127.0.0.1", "127.0.0.1", "replica", "online") +
                      node("port", 7006, "127.0.0.1", "127.0.0.1", "replica", "loading") +
                      node("port", 7003, "127.0.0.3", "127.0.0.1", "replica", "online");
  std::vector<detail::shard_owner> shards;
  REQUIRE_FALSE(detail::parse_cluster_shards(parse(bytes), "", shards));
  REQUIRE(shards.size() == 1);
  CHECK(shards[0].master.host == "127.0.0.1");  // a master by its endpoint: where clients go
  REQUIRE(shards[0].replicas.size() == 2);
  CHECK(shards[0].replicas[0].host == "127.0.0.3");  // a replica by its ip: what its master's ROLE lists
  CHECK(shards[0].replicas[0].port == 7003);
  CHECK(shards[0].replicas[1].port == 7006);  // loading (a full sync): up, and expected

  // A failed master, in the server's own spelling, is no master: its promoted replica is.
  bytes = "*1\r\n*4\r\n" + bulk("slots") + "*2\r\n:0\r\n:16383\r\n" + bulk("nodes") + "*2\r\n" +
          node("port", 7000, "127.0.0.1", "127.0.0.1", "master", "fail") +
          node("port", 7003, "127.0.0.1", "127.0.0.1", "master", "online");
  REQUIRE_FALSE(detail::parse_cluster_shards(parse(bytes), "", shards));
  REQUIRE(shards.size() == 1);
  CHECK(shards[0].master.port == 7003);
  CHECK(shards[0].replicas.empty());

  // CLUSTER SLOTS lists each range's replicas after its master (failed ones it leaves out itself).
  bytes = "*2\r\n*5\r\n:0\r\n:5460\r\n*3\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk("a1") + "*3\r\n" +
          bulk("127.0.0.1") + ":7003\r\n" + bulk("a2") + "*3\r\n" + bulk("") + ":7006\r\n" + bulk("a3");
  bytes += "*4\r\n:5461\r\n:16383\r\n*3\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk("a1") + "*3\r\n" +
           bulk("127.0.0.1") + ":7003\r\n" + bulk("a2");
  REQUIRE_FALSE(detail::parse_cluster_slots(parse(bytes), "127.0.0.2", shards));
  REQUIRE(shards.size() == 1);
  REQUIRE(shards[0].replicas.size() == 2);
  CHECK(shards[0].replicas[0].port == 7003);
  CHECK(shards[0].replicas[1].host == "127.0.0.2");  // an empty host: the node that answered
  CHECK(detail::parse_cluster_slots(parse("*1\r\n*4\r\n:0\r\n:1\r\n*2\r\n" + bulk("127.0.0.1") + ":7000\r\n:5\r\n"),
                                    "", shards) == errc::protocol_error);  // a replica that is no address
}

TEST_CASE("the slot map from CLUSTER SLOTS, for servers before Redis 7") {
  std::string bytes = "*3\r\n";
  bytes += "*4\r\n:0\r\n:5460\r\n*3\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk("a1") + "*3\r\n" +
           bulk("127.0.0.1") + ":7003\r\n" + bulk("a2");
  bytes += "*3\r\n:5461\r\n:10922\r\n*3\r\n" + bulk("") + ":7001\r\n" + bulk("b1");
  bytes += "*3\r\n:10923\r\n:16383\r\n*3\r\n" + bulk("127.0.0.1") + ":7000\r\n" + bulk("a1");
  std::vector<detail::shard_owner> shards;
  REQUIRE_FALSE(detail::parse_cluster_slots(parse(bytes), "127.0.0.2", shards));
  REQUIRE(shards.size() == 2);
  CHECK(shards[0].master.port == 7000);
  CHECK(shards[0].ranges.size() == 2);
  CHECK(shards[1].master.host == "127.0.0.2");
  CHECK(detail::parse_cluster_slots(parse("*1\r\n*2\r\n:0\r\n:1\r\n"), "", shards) == errc::protocol_error);
  CHECK(detail::parse_cluster_slots(parse("*1\r\n*3\r\n:0\r\n:1\r\n*1\r\n" + bulk("x")), "", shards) ==
        errc::protocol_error);
}

TEST_CASE("the slot table: ranges, a moved slot, completeness") {
  detail::slot_table t;
  CHECK_FALSE(t.complete());
  CHECK(t.node_of(0) == detail::slot_table::no_node);
  t.assign(0, 8191, 0);
  t.assign(8192, 16383, 1);
  CHECK(t.complete());
  CHECK(t.node_of(8191) == 0);
  CHECK(t.node_of(8192) == 1);
  t.assign(100, 2);  // MOVED 100 → node 2
  CHECK(t.node_of(100) == 2);
  CHECK(t.node_of(99) == 0);
  CHECK(t.serves_any(2));
  t.assign(0, 65535, 3);  // clamped to the last slot
  CHECK_FALSE(t.serves_any(0));
  CHECK(t.node_of(16383) == 3);
  t.clear();
  CHECK_FALSE(t.serves_any(3));
}
