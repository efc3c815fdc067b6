// Shared by the multi lock and red lock tests: one client per fixture server, with short timeouts
// so attempts on a stopped server fail fast, and a guard that restarts stopped servers.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

namespace deadbolt::test {

inline deadbolt::config fast_config(const redis_server& redis) {
  deadbolt::config cfg = config_for(redis);
  cfg.command_timeout = std::chrono::milliseconds(300);
  cfg.connect_timeout = std::chrono::milliseconds(300);
  cfg.reconnect_min = std::chrono::milliseconds(20);
  cfg.reconnect_max = std::chrono::milliseconds(100);
  return cfg;
}

/// One client per server, all on `io`.
struct clients {
  std::vector<std::unique_ptr<deadbolt::client>> all;
  clients(io_thread& io, const std::vector<redis_server>& servers) {
    for (const auto& s : servers) all.push_back(std::make_unique<deadbolt::client>(io.executor(), fast_config(s)));
  }
  /// The lock `name` on each of the first `n` clients.
  std::vector<deadbolt::reentrant_lock> locks(const std::string& name, std::size_t n) const {
    std::vector<deadbolt::reentrant_lock> out;
    for (std::size_t i = 0; i < n; ++i) out.push_back(all[i]->lock(name));
    return out;
  }
  /// Connects them all (bounded): the first attempts then measure the lock, not the connect.
  void connect() {
    for (auto& c : all) {
      REQUIRE_FALSE(call([&](auto cb) { c->async_connect(cb); }).ec);
    }
  }
};

/// Stops servers and starts them again when the test ends, however it ends.
struct stopped_servers {
  std::vector<const redis_server*> stopped;
  void stop(const redis_server& s) {
    s.stop();
    stopped.push_back(&s);
  }
  ~stopped_servers() {
    for (const auto* s : stopped) s->start();
  }
};

}  // namespace deadbolt::test
