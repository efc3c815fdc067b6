// Endpoint shapes that managed services and proxies present (docs/compatibility.md), emulated on
// loopback: real redis-servers configured to lack commands (rename-command), and a RESP-aware proxy
// (tests/support/resp_proxy.hpp) for what no server configuration gives. For each shape every lock
// kind runs with a second client waiting for it: it works, or it degrades and says so (a log line a
// case asserts), or it fails with a clear error; never a hang.
//
// Servers (DEADBOLT_REDIS_DIRS, in this order): 1. WAIT, ROLE, CONFIG, CLUSTER and HELLO renamed away;
// 2. WAIT renamed away; 3. a plain server, made a replica of the second by the case that needs one.
// Commands denied by an ACL (NOPERM rather than an unknown command) are users the cases create.
// DEADBOLT_REDIS_CLUSTER_DIR: a one-node cluster owning every slot (a slot-enforcing endpoint).
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "deadbolt/blocking.hpp"
#include "deadbolt/error.hpp"
#include "support/lock_test.hpp"
#include "support/log_lines.hpp"
#include "support/redis_cluster.hpp"
#include "support/redis_server.hpp"
#include "support/resp_proxy.hpp"

using namespace std::chrono_literals;

namespace endpoint_shapes_test {

using deadbolt::test::resp_proxy;
using deadbolt::test::unique_name;

constexpr auto handoff_wait = 4000ms;  // a waiter woken by a message gets the lock in milliseconds

// `take` holds something; a second client's `wait` (on its own thread) must get it once `give` frees
// it: the free is published, and the waiter, subscribed, hears it well within handoff_wait.
template <typename Take, typename Wait, typename Give>
void handoff(const char* kind, Take take, Wait wait, Give give) {
  INFO("kind: " << kind);
  REQUIRE(take());
  bool got = false;
  std::thread waiter([&] { got = wait(); });
  std::this_thread::sleep_for(300ms);  // parked and subscribed
  give();
  waiter.join();
  CHECK(got);
}

// Every lock kind between two clients of `cfg`: reentrant, fair, read/write, semaphore, latch.
void check_every_kind(const deadbolt::config& cfg) {
  deadbolt::blocking_client a(cfg), b(cfg);
  std::error_code ec;
  {
    const std::string name = unique_name("shape-lock");
    auto mine = a.lock(name);
    auto theirs = b.lock(name);
    handoff("reentrant", [&] { return mine.try_lock(); }, [&] { return theirs.try_lock_for(handoff_wait); },
            [&] { mine.unlock(); });
    theirs.unlock();
  }
  {
    const std::string name = unique_name("shape-fair");
    auto mine = a.fair_lock(name);
    auto theirs = b.fair_lock(name);
    handoff("fair", [&] { return mine.try_lock(); }, [&] { return theirs.try_lock_for(handoff_wait); },
            [&] { mine.unlock(); });
    theirs.unlock();
  }
  {
    const std::string name = unique_name("shape-rw");
    auto mine = a.read_write_lock(name);
    auto theirs = b.read_write_lock(name);
    handoff("read/write", [&] { return mine.try_lock(); },
            [&] { return theirs.try_lock_shared_for(handoff_wait); }, [&] { mine.unlock(); });
    theirs.unlock_shared();
  }
  {
    const std::string name = unique_name("shape-semaphore");
    auto mine = a.semaphore(name);
    auto theirs = b.semaphore(name);
    REQUIRE(mine.try_set_permits(1, ec));
    REQUIRE_FALSE(ec);
    handoff("semaphore", [&] { return mine.try_acquire(1); },
            [&] { return theirs.try_acquire_for(1, handoff_wait); }, [&] { mine.release(1); });
    theirs.release(1);
  }
  {
    const std::string name = unique_name("shape-latch");
    auto mine = a.count_down_latch(name);
    auto theirs = b.count_down_latch(name);
    handoff("latch", [&] { return mine.try_set_count(1, ec) && !ec; },
            [&] { return theirs.await_for(handoff_wait); }, [&] { mine.count_down(); });
  }
}

// Words of a command from the index of its first argument.
bool has_keys(const std::vector<std::string>& words) {
  return words.size() >= 3 && words[2] != "0";
}

}  // namespace endpoint_shapes_test

using namespace endpoint_shapes_test;

TEST_CASE("no WAIT, ROLE, CONFIG, CLUSTER or HELLO: every kind works over RESP2, and unsynced holds are reported") {
  const auto servers = deadbolt::test::redis_servers();
  const auto& stripped = servers.at(0);
  REQUIRE(stripped.cli("role").find("unknown command") != std::string::npos);
  deadbolt::test::log_lines logs;
  deadbolt::config cfg = deadbolt::test::config_for(stripped);
  cfg.log = logs.hook();
  check_every_kind(cfg);
  // HELLO refused: the login went the RESP2 way (every connection deadbolt named says so).
  deadbolt::blocking_client client(cfg);
  REQUIRE_FALSE(client.connect());
  const std::string clients = stripped.cli("client list");
  CHECK(clients.find("name=deadbolt") != std::string::npos);
  CHECK(clients.find("resp=3") == std::string::npos);
  CHECK(logs.any_contains("HELLO refused (no RESP3): logging in with RESP2"));
  CHECK_FALSE(logs.any_contains("failed"));  // switching to RESP2 is no failure
  // ROLE refused: the client cannot know of replicas, so replica sync (automatic) never WAITs; it says so.
  CHECK(logs.any_contains("ROLE refused"));
  CHECK(logs.any_contains("replica sync does not WAIT"));
}

TEST_CASE("no ROLE and no WAIT, replica sync required: an acquire fails with replicas_not_synced") {
  const auto servers = deadbolt::test::redis_servers();
  deadbolt::config cfg = deadbolt::test::config_for(servers.at(0));
  cfg.replica_sync = deadbolt::replica_sync_mode::on;
  cfg.replica_sync_retries = 1;
  cfg.replica_sync_retry_delay = 50ms;
  deadbolt::blocking_client client(cfg);
  auto lock = client.lock(unique_name("shape-required"));
  std::error_code ec;
  CHECK_FALSE(lock.try_lock_for(0ms, 0ms, ec));
  CHECK(ec == deadbolt::errc::replicas_not_synced);
  CHECK(servers.at(0).cli("exists " + lock.name()) == "0");  // given back: nothing stays held
}

#if DEADBOLT_HAS_CLUSTER  // a build without Redis Cluster support refuses cluster URLs
TEST_CASE("no CLUSTER, reached by redis+cluster://: a clear error at once, not a wait for the deadline") {
  const auto servers = deadbolt::test::redis_servers();
  deadbolt::config cfg;
  // Two seeds, the same server twice: every seed must have refused before the requests hear it.
  const std::string seed = "127.0.0.1:" + std::to_string(servers.at(0).port());
  cfg.url = "redis+cluster://" + seed + "," + seed + "/";
  cfg.command_timeout = 10s;  // the layout's refusal is an answer: nothing to wait for
  deadbolt::test::log_lines logs;
  cfg.log = logs.hook();
  deadbolt::blocking_client client(cfg);
  auto lock = client.lock(unique_name("shape-cluster"));
  for (int attempt = 0; attempt < 2; ++attempt) {  // the first request, and one after the refusal is known
    std::error_code ec;
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(lock.try_lock_for(0ms, 0ms, ec));
    CHECK(ec == deadbolt::errc::server_error);
    CHECK(std::chrono::steady_clock::now() - start < 5s);  // well before command_timeout
  }
  CHECK(logs.any_contains("no seed tells the cluster's layout (ERR unknown command"));  // the server's words say why
}

#endif

TEST_CASE("no WAIT on a master with a replica: locks work unsynced and the client says so; required fails") {
  const auto servers = deadbolt::test::redis_servers();
  const auto& master = servers.at(1);
  const auto& replica = servers.at(2);
  REQUIRE(replica.cli("replicaof 127.0.0.1 " + std::to_string(master.port())) == "OK");
  // ROLE lists a replica once its first sync is done ("state=online").
  for (int i = 0; i < 250 && master.cli("info replication").find("state=online") == std::string::npos; ++i) {
    std::this_thread::sleep_for(20ms);
  }
  REQUIRE(master.cli("info replication").find("state=online") != std::string::npos);

  deadbolt::test::log_lines logs;
  deadbolt::config cfg = deadbolt::test::config_for(master);
  cfg.log = logs.hook();
  check_every_kind(cfg);
  // WAIT refused: the holds were written, unsynced, and the client says so.
  CHECK(logs.any_contains("WAIT refused"));
  CHECK(logs.any_contains("replica sync is off on this connection"));

  cfg.replica_sync = deadbolt::replica_sync_mode::on;
  cfg.replica_sync_retries = 1;
  cfg.replica_sync_retry_delay = 50ms;
  deadbolt::blocking_client client(cfg);
  auto lock = client.lock(unique_name("shape-nowait-required"));
  std::error_code ec;
  CHECK_FALSE(lock.try_lock_for(0ms, 0ms, ec));
  CHECK(ec == deadbolt::errc::replicas_not_synced);
}

TEST_CASE("ROLE, WAIT or CLUSTER denied by an ACL (NOPERM): the same outcomes as a server without them") {
  const auto servers = deadbolt::test::redis_servers();
  // A user with every right but `denied` on `server`; its redis:// URL.
  const auto user = [](const deadbolt::test::redis_server& server, const std::string& name, const std::string& denied) {
    REQUIRE(server.cli("acl setuser " + name + " reset on '>pw' '~*' '&*' +@all " + denied) == "OK");
    return "redis://" + name + ":pw@127.0.0.1:" + std::to_string(server.port());
  };
  SUBCASE("ROLE denied: no replica known, replica sync does not WAIT, and says so") {
    deadbolt::test::log_lines logs;
    deadbolt::config cfg;
    cfg.url = user(servers.at(1), "shapes-norole", "-role -config -cluster");
    cfg.log = logs.hook();
    check_every_kind(cfg);
    CHECK(logs.any_contains("ROLE refused (NOPERM"));
  }
  SUBCASE("WAIT denied, replica sync required: replicas_not_synced, and the refusal is reported") {
    // A server with WAIT and no replica (the one-node cluster's node, reached as a plain server).
    deadbolt::test::redis_cluster cluster;
    deadbolt::test::log_lines logs;
    deadbolt::config cfg;
    cfg.url = user(cluster.nodes()[0], "shapes-nowait", "-wait");
    cfg.log = logs.hook();
    cfg.replica_sync = deadbolt::replica_sync_mode::on;
    cfg.replica_sync_retries = 1;
    cfg.replica_sync_retry_delay = 50ms;
    deadbolt::blocking_client client(cfg);
    auto lock = client.lock(unique_name("shape-acl-nowait"));
    std::error_code ec;
    CHECK_FALSE(lock.try_lock_for(0ms, 0ms, ec));
    CHECK(ec == deadbolt::errc::replicas_not_synced);
    CHECK(logs.any_contains("WAIT refused (NOPERM"));
    CHECK(logs.any_contains("replica sync is required"));
  }
#if DEADBOLT_HAS_CLUSTER
  SUBCASE("CLUSTER denied, reached by redis+cluster://: permission_denied at once") {
    deadbolt::config cfg;
    cfg.url = user(servers.at(1), "shapes-nocluster", "-cluster");
    cfg.url.replace(0, 5, "redis+cluster");
    cfg.command_timeout = 10s;
    deadbolt::blocking_client client(cfg);
    auto lock = client.lock(unique_name("shape-nocluster"));
    std::error_code ec;
    const auto start = std::chrono::steady_clock::now();
    CHECK_FALSE(lock.try_lock_for(0ms, 0ms, ec));
    CHECK(ec == deadbolt::errc::permission_denied);
    CHECK(std::chrono::steady_clock::now() - start < 5s);
  }
#endif
}

TEST_CASE("classic pub/sub run as sharded and scripts without keys refused (ElastiCache Serverless): every kind works") {
  deadbolt::test::redis_cluster cluster;
  REQUIRE(cluster.nodes().size() == 1);
  if (cluster.nodes()[0].cli("spublish deadbolt:probe x").find("ERR") != std::string::npos) {
    MESSAGE("skipped: this server has no sharded pub/sub to run classic pub/sub as");  // before Redis 7
    return;
  }
  std::atomic<int> keyless_scripts{0};
  resp_proxy proxy(
      cluster.nodes()[0].port(),
      [&](std::vector<std::string>& words) {
        std::string& name = words[0];
        if (resp_proxy::is(name, "SUBSCRIBE")) name = "SSUBSCRIBE";
        if (resp_proxy::is(name, "UNSUBSCRIBE")) name = "SUNSUBSCRIBE";
        if (resp_proxy::is(name, "PUBLISH")) name = "SPUBLISH";
        if (resp_proxy::is(name, "EVAL") || resp_proxy::is(name, "EVALSHA")) {
          if (!has_keys(words)) {
            ++keyless_scripts;
            words = {"EVAL", "return redis.error_reply('ERR scripts without keys are not supported')", "0"};
            return resp_proxy::verdict::forward;
          }
          // A script's publish, passed as an argument (Redisson's layout), is sharded too.
          for (std::size_t i = 3; i < words.size(); ++i) {
            if (resp_proxy::is(words[i], "publish")) words[i] = "spublish";
          }
        }
        return resp_proxy::verdict::forward;
      },
      [](std::string& first) {
        if (first == "ssubscribe") first = "subscribe";
        if (first == "sunsubscribe") first = "unsubscribe";
        if (first == "smessage") first = "message";
      });
  deadbolt::config cfg;
  cfg.url = proxy.url();
  check_every_kind(cfg);
  CHECK(keyless_scripts == 0);  // every script of every kind names its keys
}

#if DEADBOLT_HAS_CLUSTER
TEST_CASE("PUBSUB SHARDNUMSUB without a channel never answered (Azure): the cluster's pub/sub is still chosen") {
  deadbolt::test::redis_cluster cluster;
  std::atomic<int> bare{0};
  resp_proxy proxy(cluster.nodes()[0].port(), [&](std::vector<std::string>& words) {
    if (resp_proxy::is(words[0], "PUBSUB") && words.size() == 2 && resp_proxy::is(words[1], "SHARDNUMSUB")) {
      ++bare;
      return resp_proxy::verdict::silence;
    }
    return resp_proxy::verdict::forward;
  });
  deadbolt::test::log_lines logs;
  deadbolt::config cfg;
  cfg.url = "redis+cluster://127.0.0.1:" + std::to_string(proxy.port()) + "/";
  cfg.log = logs.hook();
  check_every_kind(cfg);
  CHECK(bare == 0);
  CHECK(proxy.silenced() == 0);
  CHECK_FALSE(logs.any_contains("SHARDNUMSUB: no answer"));  // answered (before Redis 7: with an error)
}
TEST_CASE("PUBSUB SHARDNUMSUB never answered at all: automatic gives up in time, chooses classic and says so") {
  deadbolt::test::redis_cluster cluster;
  resp_proxy proxy(cluster.nodes()[0].port(), [](std::vector<std::string>& words) {
    const bool probe = resp_proxy::is(words[0], "PUBSUB") && words.size() >= 2 && resp_proxy::is(words[1], "SHARDNUMSUB");
    return probe ? resp_proxy::verdict::silence : resp_proxy::verdict::forward;
  });
  deadbolt::test::log_lines logs;
  deadbolt::config cfg;
  cfg.url = "redis+cluster://127.0.0.1:" + std::to_string(proxy.port()) + "/";
  cfg.command_timeout = 1500ms;
  cfg.log = logs.hook();
  check_every_kind(cfg);
  CHECK(proxy.silenced() >= 1);
  CHECK(logs.any_contains("PUBSUB SHARDNUMSUB: no answer"));
}
#endif
