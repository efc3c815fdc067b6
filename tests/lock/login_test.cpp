// Logging in: passwords, ACL users and their permissions, unix sockets — against a real server
// started with --requirepass and a unix socket (fixture "secure").
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "support/log_lines.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;

namespace {

constexpr const char* password = "s3cret:p@ss";  // exercises percent-encoding in URLs
constexpr const char* encoded = "s3cret%3Ap%40ss";

std::string admin(const deadbolt::test::redis_server& redis, const std::string& args) {
  return redis.cli(std::string("--no-auth-warning -a '") + password + "' " + args);
}

bool locks_and_unlocks(const std::string& url, std::error_code& ec) {
  deadbolt::test::io_thread io;
  deadbolt::config cfg;
  cfg.url = url;
  cfg.command_timeout = 1s;
  deadbolt::client c(io.executor(), cfg);
  static std::atomic<int> n{0};
  auto lock = c.lock("login-" + std::to_string(n++));
  auto got = call<bool>([&](auto cb) { lock.async_try_lock(1, cb); });
  ec = got.ec;
  if (ec || !got.value) return false;
  ec = call([&](auto cb) { lock.async_unlock(1, cb); }).ec;
  return !ec;
}

}  // namespace

TEST_CASE("the default user's password, percent-encoded in the URL") {
  deadbolt::test::redis_server redis;
  std::error_code ec;
  CHECK(locks_and_unlocks(std::string("redis://:") + encoded + "@127.0.0.1:" + std::to_string(redis.port()), ec));
  CHECK_FALSE(ec);
}

TEST_CASE("a missing or wrong password fails at once with auth_failed") {
  deadbolt::test::redis_server redis;
  std::error_code ec;
  const auto started = std::chrono::steady_clock::now();
  CHECK_FALSE(locks_and_unlocks(redis.url(), ec));
  CHECK(ec == errc::auth_failed);
  CHECK_FALSE(locks_and_unlocks("redis://:wrong@127.0.0.1:" + std::to_string(redis.port()), ec));
  CHECK(ec == errc::auth_failed);
  CHECK(std::chrono::steady_clock::now() - started < 1900ms);  // not after each command_timeout
}

TEST_CASE("ACL users: allowed, and one without EVALSHA/EVAL gets permission_denied") {
  deadbolt::test::redis_server redis;
  REQUIRE(admin(redis, "ACL SETUSER locker on '>lockpw' '~*' '&*' +@all") == "OK");
  REQUIRE(admin(redis, "ACL SETUSER noscripts on '>nopw' '~*' '&*' +@all -evalsha -eval") == "OK");
  std::error_code ec;
  CHECK(locks_and_unlocks("redis://locker:lockpw@127.0.0.1:" + std::to_string(redis.port()), ec));
  CHECK_FALSE(ec);
  CHECK_FALSE(locks_and_unlocks("redis://noscripts:nopw@127.0.0.1:" + std::to_string(redis.port()), ec));
  CHECK(ec == errc::permission_denied);
  CHECK_FALSE(locks_and_unlocks("redis://locker:badpw@127.0.0.1:" + std::to_string(redis.port()), ec));
  CHECK(ec == errc::auth_failed);
}

TEST_CASE("a unix socket URL, with a database number") {
  deadbolt::test::redis_server redis;
  const char* dir = std::getenv("DEADBOLT_REDIS_DIR");
  std::error_code ec;
  CHECK(locks_and_unlocks(std::string("unix://:") + encoded + "@" + dir + "/redis.sock?db=3", ec));
  CHECK_FALSE(ec);
  // SELECT applied: the lock went to database 3 and was released there; an out-of-range database is a
  // configuration error.
  CHECK_FALSE(locks_and_unlocks(std::string("unix://:") + encoded + "@" + dir + "/redis.sock?db=99", ec));
  CHECK(ec == errc::invalid_config);
}

// The log lines a client wrote (config::log), for the server's own words.
using deadbolt::test::log_lines;

TEST_CASE("an ACL refusal inside the unlock script is permission_denied, and the server's words are logged") {
  // The Redisson unlock names the lock's channel in KEYS and publishes on it. Two users the acquire
  // works for and the release does not: one whose key patterns leave out the channel's name (the
  // server refuses the EVALSHA itself: "NOPERM ... keys used as arguments"), and one without channel
  // grants (Redis 7's default for a new user: the PUBLISH inside the script is refused, and the server
  // wraps that in "ERR The user executing the script can't publish ...", or on 7.2 "ERR ACL failure in
  // script: ...").
  deadbolt::test::redis_server redis;
  REQUIRE(admin(redis, "ACL SETUSER nochannelkey on '>pw1' '~perm-*' '&*' +@all") == "OK");
  REQUIRE(admin(redis, "ACL SETUSER nopublish on '>pw2' '~*' resetchannels +@all") == "OK");
  const struct {
    const char* user;
    const char* server_words;
  } cases[] = {
      {"nochannelkey:pw1", "NOPERM"},
      {"nopublish:pw2", "channel"},  // Redis: "can't publish to the channel"; Valkey 8: "access a channel"
  };
  for (const auto& c : cases) {
    const std::string user = c.user;
    CAPTURE(user);
    log_lines log;
    deadbolt::test::io_thread io;
    deadbolt::config cfg;
    cfg.url = std::string("redis://") + c.user + "@127.0.0.1:" + std::to_string(redis.port());
    cfg.command_timeout = 2s;
    cfg.log = log.hook();
    static std::atomic<int> n{0};
    const std::string name = "perm-" + std::to_string(n++);
    {
      deadbolt::client client(io.executor(), cfg);
      auto lock = client.lock(name);
      auto got = call<bool>([&](auto cb) { lock.async_try_lock(1, 10s, 0ms, cb); });
      REQUIRE_FALSE(got.ec);
      REQUIRE(got.value);
      const std::error_code ec = call([&](auto cb) { lock.async_unlock(1, cb); }).ec;
      CHECK_MESSAGE(ec == errc::permission_denied, ec.message());
      CHECK(log.any_contains(c.server_words));
    }
    admin(redis, "del " + name);
  }
}
