// A master watched by Sentinel (tests/support/redis-sentinel-fixture: a master, 2 replicas, 3
// sentinels) through redis+sentinel:// URLs: the sentinels name the master, ROLE confirms it, dead
// sentinels are skipped, a name no sentinel knows is a clear error, and after a failover a command the
// demoted master answers READONLY is sent again to the new master; the client follows +switch-master,
// moving its connections (commands and waiters) before the old master is demoted.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_sentinel.hpp"
#include "support/sync.hpp"
#include "support/tcp_proxy.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::redis_sentinel_group;
using deadbolt::test::unique_name;

namespace sentinel_test {

deadbolt::config sentinel_config(const std::string& url) {
  deadbolt::config cfg;
  cfg.url = url;
  cfg.connect_timeout = 1000ms;
  cfg.command_timeout = 1000ms;
  return cfg;
}

/// Polls `redis-cli args` on `node` every 100 ms until its answer contains `part`; false after `limit`.
bool answers_with(const deadbolt::test::redis_server& node, const std::string& args, const std::string& part,
                  std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  for (;;) {
    if (node.cli(args).find(part) != std::string::npos) return true;
    if (std::chrono::steady_clock::now() >= end) return false;
    std::this_thread::sleep_for(100ms);
  }
}

/// A server that was master is a replica now (Sentinel demoted it), within 30 s.
bool demoted(const deadbolt::test::redis_server& node) { return answers_with(node, "role", "slave", 30s); }

/// On another thread: waits up to 20 s for `name`, and unlocks it if it got it.
std::future<std::pair<bool, std::error_code>> wait_then_unlock(deadbolt::blocking_client& client,
                                                               const std::string& name) {
  return std::async(std::launch::async, [&client, name] {
    auto lock = client.lock(name);
    std::error_code ec;
    const bool got = lock.try_lock_for(20s, 30s, ec);
    if (got) lock.unlock(ec);
    return std::make_pair(got, ec);
  });
}

/// A sentinel URL naming `ports` in that order.
std::string url_of(const std::vector<std::uint16_t>& ports, const std::string& master_name) {
  std::string out = "redis+sentinel://";
  for (std::size_t i = 0; i < ports.size(); ++i) out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(ports[i]);
  return out + "/" + master_name;
}

/// SIGCONT on the way out, however the test ends: the fixture must be able to stop the server.
struct resume_on_exit {
  const deadbolt::test::redis_server& paused;
  ~resume_on_exit() { paused.resume(); }
};

/// One client is subscribed on `master` to the channel of lock `name` (a waiter has parked), within 5 s.
bool waiter_parked(const deadbolt::test::redis_server& master, const std::string& name) {
  // redis-cli answers the channel, then its count on the next line.
  return answers_with(master, "pubsub numsub redisson_lock__channel:{" + name + "}", "\n1", 5s);
}

}  // namespace sentinel_test

using namespace sentinel_test;

TEST_CASE("a lock through redis+sentinel:// lands on the master the sentinels name") {
  redis_sentinel_group group;
  deadbolt::blocking_client bc(sentinel_config(group.url()));
  REQUIRE_FALSE(bc.config_error());
  const std::string name = unique_name("sent-lock");
  auto lock = bc.lock(name);
  std::error_code ec;
  REQUIRE(lock.try_lock_for(2s, 30s, ec));
  REQUIRE_FALSE(ec);
  const auto master = group.master();
  CHECK(master.cli("exists " + name) == "1");
  for (const auto& node : group.data_nodes()) {
    if (node.port() != master.port()) CHECK_MESSAGE(node.cli("role").rfind("slave", 0) == 0, node.cli("role"));
  }
  lock.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(master.cli("exists " + name) == "0");
}

TEST_CASE("an unreachable sentinel is skipped; when none can be reached, or none knows the name, the error says so") {
  redis_sentinel_group group;
  const std::string real = group.url().substr(std::string("redis+sentinel://").size());
  SUBCASE("a closed port first: the next sentinel answers") {
    deadbolt::blocking_client bc(sentinel_config("redis+sentinel://127.0.0.1:1," + real));
    auto lock = bc.lock(unique_name("sent-skip"));
    std::error_code ec;
    CHECK(lock.try_lock_for(2s, 30s, ec));
    CHECK_FALSE(ec);
    lock.unlock(ec);
  }
  SUBCASE("no sentinel reachable") {
    deadbolt::blocking_client bc(sentinel_config("redis+sentinel://127.0.0.1:1,127.0.0.1:2/mymaster"));
    auto lock = bc.lock(unique_name("sent-down"));
    std::error_code ec;
    CHECK_FALSE(lock.try_lock_for(0ms, 30s, ec));
    CHECK_MESSAGE((ec == asio::error::connection_refused || ec == errc::not_connected), ec.message());
  }
  SUBCASE("a master name no sentinel knows") {
    const std::string url = group.url();
    deadbolt::blocking_client bc(sentinel_config(url.substr(0, url.rfind('/')) + "/no-such-master"));
    auto lock = bc.lock(unique_name("sent-unknown"));
    std::error_code ec;
    CHECK_FALSE(lock.try_lock_for(0ms, 30s, ec));
    CHECK_MESSAGE(ec == errc::unknown_master, ec.message());
  }
}

TEST_CASE("a first sentinel that accepts and never answers: lock() gets the master from the others, and later connections do not ask it first") {
  redis_sentinel_group group;
  const auto sentinels = group.sentinels();
  deadbolt::test::tcp_proxy silent(sentinels[0].port());
  silent.freeze();  // accepts connections, forwards nothing: a hung sentinel
  std::vector<std::uint16_t> ports{silent.port()};
  for (std::size_t i = 1; i < sentinels.size(); ++i) ports.push_back(sentinels[i].port());
  deadbolt::blocking_client bc(sentinel_config(url_of(ports, group.master_name())));
  const std::string name = unique_name("sent-silent-first");
  auto lock = bc.lock(name);
  std::error_code ec;
  lock.lock(ec);  // no deadline: the silent sentinel must not cost the request its own
  REQUIRE_MESSAGE(!ec, ec.message());
  const auto master = group.master();
  CHECK(master.cli("exists " + name) == "1");

  // A wait opens the subscriber connection, which asks the sentinels too: the one that answered first.
  deadbolt::blocking_client holder(sentinel_config(group.url()));
  const std::string busy = unique_name("sent-silent-busy");
  auto held = holder.lock(busy);
  held.lock();
  auto waiting = bc.lock(busy);
  CHECK_FALSE(waiting.try_lock_for(300ms, 30s, ec));
  CHECK_FALSE(ec);
  // The command connection's question and the +switch-master watch's first connection (the watch
  // takes the URL's order) reached it; nothing after them.
  CHECK(silent.accepted() <= 2);
  held.unlock();
  lock.unlock(ec);
  CHECK_FALSE(ec);
}

TEST_CASE("bad sentinel URLs are clear errors") {
  deadbolt::endpoint ep;
  CHECK(deadbolt::parse_url("redis+sentinel://127.0.0.1:26379/", ep) == errc::invalid_url);  // no master name
  CHECK(deadbolt::parse_url("redis+sentinel://127.0.0.1:26379", ep) == errc::invalid_url);
  CHECK(deadbolt::parse_url("redis+sentinel://127.0.0.1:26379,,127.0.0.1:26380/m", ep) == errc::invalid_url);
  CHECK(deadbolt::parse_url("redis+sentinel://127.0.0.1:26379/m/x", ep) == errc::invalid_url);
  REQUIRE_FALSE(deadbolt::parse_url("rediss+sentinel://u:p@127.0.0.1,127.0.0.1:26380/m/2", ep));
  CHECK(ep.tls);
  CHECK(ep.sentinel_master == "m");
  CHECK(ep.database == 2);
  CHECK(ep.user == "u");
  REQUIRE(ep.sentinels.size() == 2);
  CHECK(ep.sentinels[0].port == 26379);  // Sentinel's default port
  CHECK(ep.sentinels[1].port == 26380);
}

TEST_CASE("after SENTINEL FAILOVER the demoted master answers READONLY: the command goes to the new master") {
  redis_sentinel_group group;
  deadbolt::blocking_client bc(sentinel_config(group.url()));
  const std::string name = unique_name("sent-failover");
  auto lock = bc.lock(name);
  std::error_code ec;
  REQUIRE(lock.try_lock_for(2s, 30s, ec));
  lock.unlock(ec);
  REQUIRE_FALSE(ec);

  const auto old_master = group.master();
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  REQUIRE(group.sentinel_cli(group.sentinels().front(), "sentinel failover " + group.master_name()) == "OK");
  REQUIRE(group.wait_for_new_master(old_master.port(), 40s));
  // Sentinel demotes the old master about 10 s later (its INFO period); until then it is a master too.
  REQUIRE(demoted(old_master));

  // The client's connection still goes to the old master, which now answers READONLY.
  REQUIRE(lock.try_lock_for(5s, 30s, ec));
  CHECK_FALSE(ec);
  const auto new_master = group.master();
  CHECK(new_master.port() != old_master.port());
  CHECK(new_master.cli("exists " + name) == "1");
  lock.unlock(ec);
  CHECK_FALSE(ec);
}

TEST_CASE("a failover moves the connections at once (+switch-master): new locks and a waiter go to the new master") {
  redis_sentinel_group group;
  std::mutex log_mutex;
  std::vector<std::string> log_lines;
  deadbolt::config cfg = sentinel_config(group.url());
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
  deadbolt::blocking_client holder(cfg);
  deadbolt::blocking_client waiter(cfg);
  const std::string name = unique_name("sent-switch"), fresh_name = unique_name("sent-fresh");
  auto held = holder.lock(name);
  held.lock();
  const auto old_master = group.master();
  REQUIRE(old_master.cli("exists " + name) == "1");

  // A waiter parks on the lock's channel, on the old master.
  auto waited = wait_then_unlock(waiter, name);
  REQUIRE(waiter_parked(old_master, name));

  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  REQUIRE(group.sentinel_cli(group.sentinels().front(), "sentinel failover " + group.master_name()) == "OK");
  REQUIRE(group.wait_for_new_master(old_master.port(), 40s));
  CHECK(deadbolt::test::eventually([&] { return logged("sentinel: master '" + group.master_name() + "' switched"); },
                                   5000ms));
  const auto new_master = group.master();
  REQUIRE(new_master.port() != old_master.port());

  // Sentinel demotes the old master some 10 s after the switch; until then it still takes writes. A
  // new lock goes to the new master all the same.
  auto fresh = holder.lock(fresh_name);
  std::error_code ec;
  REQUIRE(fresh.try_lock_for(5s, 30s, ec));
  CHECK_FALSE(ec);
  CHECK(new_master.cli("exists " + fresh_name) == "1");
  CHECK(old_master.cli("exists " + fresh_name) == "0");
  MESSAGE("the old master's role while the fresh lock was taken: " << old_master.cli("role").substr(0, 6));
  fresh.unlock(ec);
  CHECK_FALSE(ec);

  // The unlock publishes on the new master, where the waiter is subscribed now.
  held.unlock(ec);
  CHECK_FALSE(ec);
  REQUIRE(waited.wait_for(25s) == std::future_status::ready);
  const auto [got, wait_ec] = waited.get();
  CHECK(got);
  CHECK_FALSE(wait_ec);
  CHECK(new_master.cli("exists " + name) == "0");

  // The group as the other cases expect it: one master, the rest replicas.
  CHECK(demoted(old_master));
}

TEST_CASE("the watched sentinel goes silent (SIGSTOP) and a failover is made through another: the client follows it and never acquires on the old master") {
  redis_sentinel_group group;
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  const auto sentinels = group.sentinels();
  REQUIRE(sentinels.size() >= 3);
  const auto& silent = sentinels[0];  // B's URL names it first: B's +switch-master watch is on it
  const auto& other = sentinels[1];
  deadbolt::config cfg_b = sentinel_config(group.url());
  cfg_b.client_name = "deadbolt-b";
  deadbolt::blocking_client b(cfg_b);
  std::error_code ec;
  {
    auto warm = b.lock(unique_name("sent-silent-warm"));
    REQUIRE(warm.try_lock_for(2s, 30s, ec));
    warm.unlock(ec);
  }
  REQUIRE(deadbolt::test::eventually(
      [&] {
        const std::string clients = group.sentinel_cli(silent, "client list");
        for (std::size_t at = clients.find("name=deadbolt-b "); at != std::string::npos;
             at = clients.find("name=deadbolt-b ", at + 1)) {
          const std::size_t end = clients.find('\n', at);
          if (clients.substr(at, end - at).find(" sub=1 ") != std::string::npos) return true;
        }
        return false;
      },
      5000ms));
  const auto old_master = group.master();

  silent.pause();
  resume_on_exit resume{silent};
  const auto paused_at = std::chrono::steady_clock::now();
  REQUIRE(group.sentinel_cli(other, "sentinel failover " + group.master_name()) == "OK");
  int new_port = 0;
  REQUIRE(deadbolt::test::eventually(
      [&] {
        new_port = group.named_master_port(other);
        return new_port != 0 && new_port != old_master.port();
      },
      40000ms, 50ms));
  deadbolt::test::redis_server new_master = old_master;
  for (const auto& node : group.data_nodes()) {
    if (node.port() == new_port) new_master = node;
  }
  REQUIRE(new_master.port() == new_port);

  // A, whose sentinels answer, locks x on the new master.
  const std::string x = unique_name("sent-silent-x"), y = unique_name("sent-silent-y");
  deadbolt::blocking_client a(sentinel_config(url_of({other.port(), sentinels[2].port(), silent.port()},
                                                     group.master_name())));
  auto ax = a.lock(x);
  REQUIRE(ax.try_lock_for(5s, 30s, ec));
  REQUIRE(new_master.cli("exists " + x) == "1");
  const bool old_still_master = old_master.cli("role").rfind("master", 0) == 0;

  // docs/sentinel.md's window: for ping_interval + ping_timeout after B last heard its sentinel, B
  // may still acquire on the master it knows. Past it, B must not.
  std::this_thread::sleep_until(paused_at + cfg_b.ping_interval + cfg_b.ping_timeout);
  auto bx = b.lock(x);
  CHECK_FALSE(bx.try_lock(ec));
  CHECK_MESSAGE(!ec, ec.message());
  CHECK(old_master.cli("exists " + x) == "0");
  MESSAGE("the old master was still a master when A locked: " << old_still_master);
  // B has followed the switch: a fresh lock lands on the new master.
  auto by = b.lock(y);
  REQUIRE(by.try_lock_for(5s, 30s, ec));
  CHECK(new_master.cli("exists " + y) == "1");
  CHECK(old_master.cli("exists " + y) == "0");
  by.unlock(ec);
  ax.unlock(ec);

  // The group as the other cases expect it: every sentinel up, one master, the rest replicas.
  silent.resume();
  CHECK(demoted(old_master));
}

TEST_CASE("SIGKILL of the master while a lock is held and a waiter waits: both carry on on the promoted replica") {
  redis_sentinel_group group;
  deadbolt::blocking_client holder(sentinel_config(group.url()));
  deadbolt::blocking_client waiter(sentinel_config(group.url()));
  const std::string name = unique_name("sent-kill");
  auto held = holder.lock(name);
  held.lock();  // the watchdog renews it
  const auto old_master = group.master();
  for (const auto& node : group.data_nodes()) {  // the promoted replica has the hold
    if (node.port() != old_master.port()) {
      REQUIRE(deadbolt::test::eventually([&] { return node.cli("exists " + name) == "1"; }, 5000ms));
    }
  }
  auto waited = wait_then_unlock(waiter, name);
  REQUIRE(waiter_parked(old_master, name));

  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  old_master.stop();  // SIGKILL
  REQUIRE(group.wait_for_new_master(old_master.port(), 40s));
  const auto new_master = group.master();
  CHECK(new_master.cli("exists " + name) == "1");
  CHECK_FALSE(held.lease_lost());
  std::error_code ec;
  held.unlock(ec);  // on the new master: its message wakes the waiter, resubscribed there
  CHECK_FALSE(ec);
  REQUIRE(waited.wait_for(25s) == std::future_status::ready);
  const auto [got, wait_ec] = waited.get();
  CHECK(got);
  CHECK_FALSE(wait_ec);
  CHECK(new_master.cli("exists " + name) == "0");

  // Back as it was for the other cases: the old master returns, Sentinel makes it a replica, and it
  // catches up with the new master.
  old_master.start();
  CHECK(answers_with(old_master, "info replication", "master_link_status:up", 30s));
}

TEST_CASE("replica sync: a lock returns once a replica has it, and survives a SIGKILL of the master right after") {
  redis_sentinel_group group;
  const auto old_master = group.master();
  std::vector<deadbolt::test::redis_server> replicas;
  for (const auto& node : group.data_nodes()) {
    if (node.port() != old_master.port()) replicas.push_back(node);
  }
  REQUIRE(replicas.size() == 2);
  // Every sentinel knows both replicas as healthy (after the previous case's restart it takes a while),
  // so that the failover below has its candidates.
  REQUIRE(group.wait_for_healthy_replicas(2, 30s));
  deadbolt::blocking_client holder(sentinel_config(group.url()));
  REQUIRE_FALSE(holder.connect());
  const std::string name = unique_name("sent-synced");
  auto held = holder.lock(name);

  // Both replicas stopped: no replica has acknowledged the lock, and the acquire's WAIT holds it
  // back until one does (without WAIT it returns at once). A stopped replica still receives the
  // write in its socket buffer, so the test cannot make the write itself go missing.
  for (const auto& r : replicas) r.pause();
  std::atomic<std::int64_t> resumed_ns{0};
  std::thread resume_one([&] {
    std::this_thread::sleep_for(300ms);
    resumed_ns = std::chrono::steady_clock::now().time_since_epoch().count();
    replicas[0].resume();
  });
  held.lock();
  const std::int64_t locked_ns = std::chrono::steady_clock::now().time_since_epoch().count();
  resume_one.join();
  CHECK(locked_ns > resumed_ns.load());  // not before a replica could acknowledge it
  CHECK(replicas[0].cli("exists " + name) == "1");
  replicas[1].resume();  // both are candidates for the failover
  old_master.stop();     // SIGKILL, at once

  REQUIRE(group.wait_for_new_master(old_master.port(), 40s));
  const auto new_master = group.master();
  CHECK(new_master.cli("exists " + name) == "1");
  CHECK_FALSE(held.lease_lost());
  std::error_code ec;
  held.unlock(ec);
  CHECK_FALSE(ec);
  CHECK(new_master.cli("exists " + name) == "0");

  old_master.start();
  CHECK(answers_with(old_master, "info replication", "master_link_status:up", 30s));
}
