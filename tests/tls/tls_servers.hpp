// The TLS fixture's servers and certificates (tests/support/redis-tls-fixture), found through
// DEADBOLT_TLS_DIR.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <string>

#include <doctest/doctest.h>

#include "deadbolt/config.hpp"

namespace deadbolt::test {

class tls_servers {
 public:
  tls_servers() {
    const char* dir = std::getenv("DEADBOLT_TLS_DIR");
    REQUIRE_MESSAGE(dir != nullptr, "DEADBOLT_TLS_DIR is not set: run through ctest");
    dir_ = dir;
  }

  /// A file the fixture made: "ca.pem", "client.key", ...
  std::string file(const std::string& name) const { return dir_ + "/" + name; }
  /// The TLS port of server `name` (tls, mtls, expired).
  std::uint16_t port(const std::string& name) const { return read_port(dir_ + "/" + name + "/port"); }
  std::uint16_t plain_port() const { return read_port(dir_ + "/tls/plain_port"); }
  std::string url(const std::string& name) const { return "rediss://127.0.0.1:" + std::to_string(port(name)); }

  /// TLS to `server`, trusting the fixture's CA; generous deadlines, so a failure that only a deadline
  /// ends shows as a call that did not complete.
  deadbolt::config config_for(const std::string& server) const {
    deadbolt::config cfg;
    cfg.url = url(server);
    cfg.tls.ca_file = file("ca.pem");
    cfg.connect_timeout = std::chrono::seconds(2);
    cfg.command_timeout = std::chrono::seconds(60);
    return cfg;
  }

 private:
  static std::uint16_t read_port(const std::string& path) {
    std::ifstream in(path);
    unsigned port = 0;
    in >> port;
    REQUIRE_MESSAGE(port != 0, "no port in " << path);
    return static_cast<std::uint16_t>(port);
  }

  std::string dir_;
};

}  // namespace deadbolt::test
