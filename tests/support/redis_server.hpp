// Test access to the redis-server a CTest fixture started (tests/support/redis-fixture): its port, a
// redis-cli for checking state independently of deadbolt, and fault injection (stop, restart, pause).
// A server that speaks TLS only has its redis-cli options in DIR/cli_args, one a line (the sentinel
// fixture with SENTINEL_TLS=1).
#pragma once

#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <chrono>
#include <vector>

#include <doctest/doctest.h>

namespace deadbolt::test {

class redis_server {
 public:
  redis_server() {
    const char* dir = std::getenv("DEADBOLT_REDIS_DIR");
    REQUIRE_MESSAGE(dir != nullptr, "DEADBOLT_REDIS_DIR is not set: run through ctest");
    load(dir);
  }
  /// The server a fixture started in `dir` (tests with several servers: DEADBOLT_REDIS_DIRS).
  explicit redis_server(const std::string& dir) { load(dir); }

  std::uint16_t port() const { return port_; }
  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }

  /// Runs redis-cli with `args` (shell words) and returns its output without the trailing newline.
  /// `timeout_seconds` > 0: gives up after that long, with what it had (a paused server never answers).
  std::string cli(const std::string& args, int timeout_seconds = 0) const {
    const std::string limit = timeout_seconds > 0 ? "timeout " + std::to_string(timeout_seconds) + " " : "";
    const std::string command =
        limit + "redis-cli" + cli_options_ + " -p " + std::to_string(port_) + " " + args + " 2>&1";
    std::string out;
    if (FILE* p = popen(command.c_str(), "r")) {
      char buf[512];
      while (std::fgets(buf, sizeof buf, p)) out += buf;
      pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
  }
  /// How many times the server ran `command` (lower case) since it started: INFO commandstats.
  long calls_of(const std::string& command) const {
    const std::string stats = cli("info commandstats");
    const std::string key = "cmdstat_" + command + ":calls=";
    const auto at = stats.find(key);
    return at == std::string::npos ? 0 : std::stol(stats.substr(at + key.size()));
  }

  int pid() const {
    std::ifstream in(dir_ + "/redis.pid");
    int pid = 0;
    in >> pid;
    return pid;
  }
  void pause() const { ::kill(pid(), SIGSTOP); }
  void resume() const { ::kill(pid(), SIGCONT); }

  /// Stops the server (all data is lost: it keeps none).
  void stop() const {
    const int p = pid();
    ::kill(p, SIGCONT);
    ::kill(p, SIGKILL);
    for (int i = 0; i < 200 && ::kill(p, 0) == 0 && !zombie(p); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  /// Starts it again on the same port.
  void start() const {
    std::ifstream in(dir_ + "/args");
    std::string line, args;
    while (std::getline(in, line)) args += " '" + line + "'";
    REQUIRE(std::system(("redis-server" + args).c_str()) == 0);
    for (int i = 0; i < 200 && !answers(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    REQUIRE_MESSAGE(answers(), "redis-server on port " << port_ << " did not come back");
  }

 private:
  // A daemonized server's parent is whatever adopted it, which (in a container) may never reap it:
  // a killed server can stay a zombie, which kill(pid, 0) still finds.
  static bool zombie(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string stat;
    std::getline(in, stat);
    const auto paren = stat.rfind(')');
    return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] == 'Z';
  }

  // PONG, or NOAUTH from a server that requires a password (the sentinels with SENTINEL_AUTH_PASS).
  bool answers() const {
    const std::string reply = cli("ping");
    return reply == "PONG" || reply.rfind("NOAUTH", 0) == 0;
  }

  void load(const std::string& dir) {
    dir_ = dir;
    std::ifstream in(dir_ + "/port");
    in >> port_;
    REQUIRE_MESSAGE(port_ != 0, "no redis-server port in " << dir_);
    std::ifstream options(dir_ + "/cli_args");
    for (std::string option; std::getline(options, option);) cli_options_ += " '" + option + "'";
  }

  std::string dir_;
  std::uint16_t port_ = 0;
  std::string cli_options_;  // each with a space before it, quoted
};

/// Every server of a test that requires several fixtures (DEADBOLT_REDIS_DIRS, comma-separated).
inline std::vector<redis_server> redis_servers() {
  const char* dirs = std::getenv("DEADBOLT_REDIS_DIRS");
  REQUIRE_MESSAGE(dirs != nullptr, "DEADBOLT_REDIS_DIRS is not set: run through ctest");
  std::vector<redis_server> out;
  std::stringstream in(dirs);
  std::string dir;
  while (std::getline(in, dir, ',')) {
    if (!dir.empty()) out.emplace_back(dir);
  }
  return out;
}

}  // namespace deadbolt::test
