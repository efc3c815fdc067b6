// Test access to the Redis Cluster a CTest fixture started (tests/support/redis-cluster-fixture):
// every node as a redis_server (redis-cli, kill, pause, restart), and which of them are masters now.
#pragma once

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include <doctest/doctest.h>

#include "deadbolt/config.hpp"
#include "support/redis_server.hpp"

namespace deadbolt::test {

class redis_cluster {
 public:
  redis_cluster() {
    const char* dir = std::getenv("DEADBOLT_REDIS_CLUSTER_DIR");
    REQUIRE_MESSAGE(dir != nullptr, "DEADBOLT_REDIS_CLUSTER_DIR is not set: run through ctest");
    for (int n = 1;; ++n) {
      const std::string node = std::string(dir) + "/node-" + std::to_string(n);
      if (!std::ifstream(node + "/port")) break;
      nodes_.emplace_back(node);
    }
    REQUIRE_MESSAGE(!nodes_.empty(), "no cluster nodes in " << dir);
  }

  const std::vector<redis_server>& nodes() const { return nodes_; }

  /// The nodes whose ROLE is master right now.
  std::vector<redis_server> masters() const {
    std::vector<redis_server> out;
    for (const auto& n : nodes_) {
      if (n.cli("role").rfind("master", 0) == 0) out.push_back(n);
    }
    return out;
  }

  /// A seed URL naming every node, as a user would write it.
  std::string url() const {
    std::string out = "redis+cluster://";
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      out += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(nodes_[i].port());
    }
    return out + "/";
  }

 private:
  std::vector<redis_server> nodes_;
};

/// A client configuration for `cluster`: every node a seed, a short command timeout.
inline deadbolt::config cluster_config(const redis_cluster& cluster) {
  deadbolt::config cfg;
  cfg.url = cluster.url();
  cfg.command_timeout = std::chrono::milliseconds(2000);
  return cfg;
}

}  // namespace deadbolt::test
