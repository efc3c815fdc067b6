// Sentinel over TLS (fixture "sentinel_tls": tests/support/redis-sentinel-fixture with SENTINEL_TLS=1, a
// master, one replica and 3 sentinels, all on TLS ports only): rediss+sentinel:// finds the master
// through the sentinels and locks on it, both over TLS; a CA that signed nothing there and plaintext to
// the TLS sentinels are clear errors, never a hang; a failover reaches the client over its TLS
// subscriber connection to a sentinel (+switch-master).
#include <doctest/doctest.h>

#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_sentinel.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::redis_sentinel_group;
using deadbolt::test::unique_name;

namespace sentinel_tls_test {

/// TLS to the group, trusting the fixture's CA.
deadbolt::config tls_config(const redis_sentinel_group& group) {
  REQUIRE_MESSAGE(!group.ca_file().empty(), "the sentinel group speaks no TLS: start it with SENTINEL_TLS=1");
  deadbolt::config cfg;
  cfg.url = group.url();
  cfg.tls.ca_file = group.ca_file();
  cfg.connect_timeout = 2s;
  cfg.command_timeout = 30s;
  return cfg;
}

/// One try_lock through a client of its own: its error, or none when it locked (and unlocked again).
/// Its own limit (10 s) is well beyond the 3 s command timeout the failure cases set: a hang fails it.
std::error_code try_lock(const deadbolt::config& cfg) {
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), cfg);
  auto lock = c.lock(unique_name("sent-tls-failure"));
  auto got = deadbolt::test::call<bool>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); }, 10s);
  if (!got.ec) CHECK(deadbolt::test::call([&](auto cb) { lock.async_unlock(1, cb); }).ec == std::error_code());
  return got.ec;
}

bool says(const std::error_code& ec, const std::string& words) {
  return ec.message().find(words) != std::string::npos;
}

}  // namespace sentinel_tls_test

using namespace sentinel_tls_test;

TEST_CASE("a lock through rediss+sentinel:// lands on the master the TLS sentinels name, and on its replica") {
  redis_sentinel_group group;
  const auto cfg = tls_config(group);
  REQUIRE(cfg.url.rfind("rediss+sentinel://", 0) == 0);
  deadbolt::blocking_client bc(cfg);
  REQUIRE_FALSE(bc.config_error());
  const std::string name = unique_name("sent-tls-lock");
  auto lock = bc.lock(name);
  std::error_code ec;
  REQUIRE(lock.try_lock_for(2s, 30s, ec));
  REQUIRE_FALSE(ec);
  const auto master = group.master();  // redis-cli over TLS, as the group's nodes speak nothing else
  CHECK(master.cli("exists " + name) == "1");
  for (const auto& node : group.data_nodes()) {
    if (node.port() == master.port()) continue;
    CHECK_MESSAGE(node.cli("role").rfind("slave", 0) == 0, node.cli("role"));
    // Replica sync: the acquire returned once the replica (replicating over TLS) had the hold.
    CHECK(node.cli("exists " + name) == "1");
  }
  lock.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(master.cli("exists " + name) == "0");
}

// A sentinel that cannot be used is skipped and the attempt retried with the backoff (docs/sentinel.md),
// so the failures below end at the request's deadline, with the last attempt's error.
TEST_CASE("TLS sentinels with a certificate from a CA we do not trust: a verify error by the deadline") {
  redis_sentinel_group group;
  auto cfg = tls_config(group);
  cfg.tls.ca_file = group.file("other-ca.pem");
  cfg.command_timeout = 3s;
  const std::error_code ec = try_lock(cfg);
  CHECK_MESSAGE(ec.category() == deadbolt::tls_verify_category(), ec.category().name() << ": " << ec.message());
  CHECK_MESSAGE(says(ec, "certificate verify failed"), ec.message());
}

TEST_CASE("plaintext redis+sentinel:// to TLS sentinels: closed during the login, by the deadline") {
  redis_sentinel_group group;
  auto cfg = tls_config(group);
  cfg.url.replace(0, std::string("rediss").size(), "redis");
  REQUIRE(cfg.url.rfind("redis+sentinel://", 0) == 0);
  cfg.command_timeout = 3s;
  const std::error_code ec = try_lock(cfg);
  CHECK_MESSAGE(ec == errc::closed_during_login, ec.category().name() << ": " << ec.message());
}

TEST_CASE("a failover reaches the client through its TLS connection to a sentinel (+switch-master)") {
  redis_sentinel_group group;
  std::mutex log_mutex;
  std::vector<std::string> log_lines;
  auto cfg = tls_config(group);
  cfg.log = [&](deadbolt::log_level, std::string_view line) {
    std::lock_guard<std::mutex> hold(log_mutex);
    log_lines.emplace_back(line);
  };
  auto logged = [&](const std::string& part) {
    std::lock_guard<std::mutex> hold(log_mutex);
    for (const auto& line : log_lines) {
      if (line.find(part) != std::string::npos) return true;
    }
    return false;
  };
  deadbolt::blocking_client bc(cfg);
  auto first = bc.lock(unique_name("sent-tls-before"));
  std::error_code ec;
  REQUIRE(first.try_lock_for(2s, 30s, ec));  // connected, and subscribed to the sentinels' announcements
  first.unlock(ec);
  REQUIRE_FALSE(ec);

  const auto old_master = group.master();
  REQUIRE(group.wait_for_healthy_replicas(1, 30s));
  REQUIRE(group.sentinel_cli(group.sentinels().front(), "sentinel failover " + group.master_name()) == "OK");
  REQUIRE(group.wait_for_new_master(old_master.port(), 40s));
  CHECK(deadbolt::test::eventually([&] { return logged("sentinel: master '" + group.master_name() + "' switched"); },
                                   5000ms));
  const auto new_master = group.master();
  REQUIRE(new_master.port() != old_master.port());

  // The old master still takes writes until Sentinel demotes it (some 10 s later): a lock on the new
  // master now shows the client has moved there.
  const std::string name = unique_name("sent-tls-after");
  auto after = bc.lock(name);
  REQUIRE(after.try_lock_for(5s, 30s, ec));
  CHECK_FALSE(ec);
  CHECK(new_master.cli("exists " + name) == "1");  // the old master's writes never reach it
  after.unlock(ec);
  CHECK_FALSE(ec);
}
