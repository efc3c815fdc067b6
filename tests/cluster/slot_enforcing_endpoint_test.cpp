// An endpoint that enforces hash slots, reached by redis://: a one-node Redis Cluster that owns all
// 16384 slots (tests/support/redis-cluster-fixture with `1 0`), which to a client looks like a
// cluster proxy or an always-clustered managed service. A script whose keys are in different slots is
// refused there with CROSSSLOT: the watchdog must not mix slots in a renewal, and a renewal the server
// refuses is reported as a renewal failure, with the server's words.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "deadbolt/blocking.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/observability.hpp"
#include "support/lock_test.hpp"
#include "support/redis_cluster.hpp"

using namespace std::chrono_literals;

namespace slot_enforcing_endpoint_test {

// Called on the client's loop thread; read by the test's thread.
class renewal_counts final : public deadbolt::metrics_hook {
 public:
  std::atomic<int> renewed{0}, failures{0}, lost{0};

  void on_renewal(std::size_t holds) override { renewed += static_cast<int>(holds); }
  void on_renewal_failure(std::size_t, std::error_code error) override {
    std::lock_guard<std::mutex> hold(mutex_);
    ++failures;
    last_failure_ = error;
  }
  void on_lease_lost(std::string_view) override { ++lost; }
  std::error_code last_failure() {
    std::lock_guard<std::mutex> hold(mutex_);
    return last_failure_;
  }

 private:
  std::mutex mutex_;
  std::error_code last_failure_;
};

class log_lines {
 public:
  deadbolt::log_hook hook() {
    return [this](deadbolt::log_level, std::string_view message) {
      std::lock_guard<std::mutex> hold(mutex_);
      lines_.emplace_back(message);
    };
  }
  bool any_with(const std::string& a, const std::string& b) {
    std::lock_guard<std::mutex> hold(mutex_);
    for (const auto& l : lines_) {
      if (l.find(a) != std::string::npos && l.find(b) != std::string::npos) return true;
    }
    return false;
  }

 private:
  std::mutex mutex_;
  std::vector<std::string> lines_;
};

}  // namespace slot_enforcing_endpoint_test

using namespace slot_enforcing_endpoint_test;

TEST_CASE("watchdog holds in three slots of a slot-enforcing endpoint reached by redis:// stay held") {
  deadbolt::test::redis_cluster cluster;
  REQUIRE(cluster.nodes().size() == 1);
  const auto& node = cluster.nodes()[0];
  REQUIRE(node.cli("cluster info").find("cluster_slots_assigned:16384") != std::string::npos);

  auto metrics = std::make_shared<renewal_counts>();
  log_lines logs;
  deadbolt::config cfg;
  cfg.url = node.url();  // redis://: the client knows nothing of slots
  cfg.metrics = metrics;
  cfg.log = logs.hook();
  cfg.watchdog_timeout = 1200ms;  // renewed every 400 ms
  deadbolt::blocking_client client(cfg);

  // Three names in three slots, held together: the watchdog's runs see all three.
  std::vector<std::string> names;
  std::set<std::string> slots;
  while (names.size() < 3) {
    const std::string name = deadbolt::test::unique_name("slot-enforcing");
    if (slots.insert(node.cli("cluster keyslot " + name)).second) names.push_back(name);
  }
  std::vector<deadbolt::blocking_lock> locks;
  for (const auto& name : names) {
    locks.push_back(client.lock(name));
    locks.back().lock();
  }
  std::this_thread::sleep_for(4000ms);  // over three leases

  for (const auto& name : names) CHECK(std::stoll(node.cli("pttl " + name)) > 0);
  CHECK(metrics->lost == 0);
  CHECK(metrics->renewed >= 3 * 3);
  // The first renewal mixed the slots, as it may on a plain server: the server refused it, and that
  // was reported with its reason. The client then renews slot by slot.
  CHECK(metrics->failures == 1);
  CHECK(metrics->last_failure() == deadbolt::errc::cross_slot);
  CHECK(logs.any_with("renewal of", "CROSSSLOT"));
  for (auto& lock : locks) {
    std::error_code ec;
    lock.unlock(ec);
    CHECK_FALSE(ec);
  }
}
