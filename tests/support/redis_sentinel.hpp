// Test access to the Redis Sentinel group a CTest fixture started (tests/support/redis-sentinel-fixture):
// its data nodes and sentinels as redis_servers (redis-cli, kill, pause, restart), which data node the
// sentinels name master now, and a sentinel URL naming every sentinel. A group started with
// SENTINEL_TLS=1 speaks TLS only: its URL is rediss+sentinel://, redis-cli talks TLS to it, and ca_file()
// names the CA that signed its certificate.
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "support/redis_server.hpp"
#include "support/sync.hpp"

namespace deadbolt::test {

class redis_sentinel_group {
 public:
  redis_sentinel_group() {
    const char* dir = std::getenv("DEADBOLT_REDIS_SENTINEL_DIR");
    REQUIRE_MESSAGE(dir != nullptr, "DEADBOLT_REDIS_SENTINEL_DIR is not set: run through ctest");
    const std::string root = dir;
    data_nodes_.emplace_back(root + "/master");
    add_numbered(root + "/replica-", data_nodes_);
    add_numbered(root + "/sentinel-", sentinels_);
    REQUIRE_MESSAGE(!sentinels_.empty(), "no sentinels in " << root);
    std::ifstream(root + "/master_name") >> master_name_;
    REQUIRE_MESSAGE(!master_name_.empty(), "no master_name in " << root);
    std::ifstream pass(root + "/sentinel_pass");  // only when the fixture ran with SENTINEL_AUTH_PASS
    std::getline(pass, sentinel_password_);
    if (std::ifstream(root + "/ca.pem")) ca_file_ = root + "/ca.pem";  // only with SENTINEL_TLS=1
    root_ = root;
  }

  /// The master the fixture started, then its replicas (which of them is master now: master()).
  std::vector<redis_server> data_nodes() const { return data_nodes_; }
  std::vector<redis_server> sentinels() const { return sentinels_; }
  /// The name the sentinels monitor the master under.
  std::string master_name() const { return master_name_; }
  /// The password the sentinels require (SENTINEL_AUTH_PASS); empty when they require none.
  std::string sentinel_password() const { return sentinel_password_; }
  /// The CA that signed every node's certificate (SENTINEL_TLS=1); empty when the group speaks no TLS.
  std::string ca_file() const { return ca_file_; }
  /// A file of the fixture's directory: "other-ca.pem", ...
  std::string file(const std::string& name) const { return root_ + "/" + name; }

  /// redis-cli to `sentinel` with `args` (shell words), logged in with the sentinels' password if any.
  /// Gives up after 2 s, with what it had: a paused sentinel never answers.
  std::string sentinel_cli(const redis_server& sentinel, const std::string& args) const {
    if (sentinel_password_.empty()) return sentinel.cli(args, 2);
    std::string quoted = "'";
    for (const char c : sentinel_password_) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return sentinel.cli("--no-auth-warning -a " + quoted + "' " + args, 2);
  }

  /// The port `sentinel` names as the master's now; 0 when it does not answer with an address.
  int named_master_port(const redis_server& sentinel) const {
    std::istringstream reply(sentinel_cli(sentinel, "sentinel get-master-addr-by-name " + master_name_));
    std::string host;
    int port = 0;
    if (!std::getline(reply, host) || !(reply >> port)) return 0;
    return port;
  }

  /// The data node that the first sentinel to answer names master now.
  redis_server master() const {
    for (const auto& sentinel : sentinels_) {
      const int port = named_master_port(sentinel);
      if (port == 0) continue;
      for (const auto& node : data_nodes_) {
        if (node.port() == port) return node;
      }
      FAIL("sentinel " << sentinel.port() << " names master port " << port << ", no data node of the group");
    }
    FAIL("no sentinel names a master for " << master_name_);
    return data_nodes_.front();  // not reached
  }

  /// A sentinel URL naming every sentinel, as a user would write it (without the sentinels' password);
  /// rediss+sentinel:// when the group speaks TLS.
  std::string url() const {
    std::string out = ca_file_.empty() ? "redis+sentinel://" : "rediss+sentinel://";
    for (std::size_t i = 0; i < sentinels_.size(); ++i) {
      out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(sentinels_[i].port());
    }
    return out + "/" + master_name_;
  }

  /// Polls until every sentinel lists `count` replicas of the master flagged "slave" and nothing else
  /// (not s_down, not disconnected): a failover started then has its candidates. After a failover the
  /// old master is demoted, and listed as a healthy replica, only some 10 s later; started before that,
  /// a failover could take longer than a test waits (seen under ASan on a loaded machine). False after
  /// `timeout`.
  bool wait_for_healthy_replicas(std::size_t count, std::chrono::milliseconds timeout) const {
    return eventually([&] { return all_list_healthy_replicas(count); }, timeout, std::chrono::milliseconds(100));
  }

  /// Polls until every sentinel names the same master and it is not `old_port`; false after `timeout`.
  /// (A stopped or paused sentinel names nothing, so this waits for the full timeout then.) When it
  /// returns true the promoted replica already answers ROLE with master; the old master, if still up,
  /// is demoted only later (Sentinel sends it REPLICAOF some 10 s after the switch).
  bool wait_for_new_master(int old_port, std::chrono::milliseconds timeout) const {
    return eventually([&] { return all_name_new_master(old_port); }, timeout, std::chrono::milliseconds(50));
  }

 private:
  static void add_numbered(const std::string& prefix, std::vector<redis_server>& out) {
    for (int n = 1; std::ifstream(prefix + std::to_string(n) + "/port"); ++n) {
      out.emplace_back(prefix + std::to_string(n));
    }
  }

  bool all_list_healthy_replicas(std::size_t count) const {
    const std::string flag = "flags\nslave\n";  // exactly "slave"
    for (const auto& sentinel : sentinels_) {
      const std::string known = sentinel_cli(sentinel, "sentinel replicas " + master_name_);
      std::size_t healthy = 0;
      for (std::size_t at = known.find(flag); at != std::string::npos; at = known.find(flag, at + 1)) ++healthy;
      if (healthy < count) return false;
    }
    return true;
  }

  bool all_name_new_master(int old_port) const {
    int agreed = 0;
    for (const auto& sentinel : sentinels_) {
      const int port = named_master_port(sentinel);
      if (port == 0 || port == old_port || (agreed != 0 && port != agreed)) return false;
      agreed = port;
    }
    return true;
  }

  std::vector<redis_server> data_nodes_;
  std::vector<redis_server> sentinels_;
  std::string master_name_;
  std::string sentinel_password_;
  std::string ca_file_;
  std::string root_;
};

}  // namespace deadbolt::test
