// Shared by the lock tests: a client config for the fixture's server, and lock names no other test
// (or earlier run against the same server) uses.
#pragma once

#include <unistd.h>

#include <atomic>
#include <string>

#include "deadbolt/config.hpp"
#include "support/redis_server.hpp"

namespace deadbolt::test {

inline deadbolt::config config_for(const redis_server& redis) {
  deadbolt::config cfg;
  cfg.url = redis.url();
  return cfg;
}

inline std::string unique_name(const char* base) {
  static std::atomic<int> n{0};
  return std::string(base) + "-" + std::to_string(::getpid()) + "-" + std::to_string(n++);
}

}  // namespace deadbolt::test
