// Least privilege through the library (include/deadbolt/acl.hpp): a user made with exactly
// acl_grants' rules (what an application's own user needs: no inspect, no CLI keys) uses the kinds the
// CLI has no command for — the semaphore, the count-down latch — and a reentrant lock, waiters woken
// included, with nothing refused (the server's ACL LOG names the user nowhere), and is refused another
// name. tests/cli/cli_acl_test.sh covers the CLI's kinds. Part of login_test (fixture "secure").
#include <doctest/doctest.h>

#include <chrono>
#include <future>
#include <string>
#include <vector>

#include "deadbolt/acl.hpp"
#include "deadbolt/deadbolt.hpp"
#include "support/acl_log.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::acl_object;
using deadbolt::test::call;

namespace {

constexpr const char* admin_url_password = "s3cret%3Ap%40ss";

std::string url_of(const deadbolt::test::redis_server& redis, const std::string& credentials) {
  return "redis://" + credentials + "@127.0.0.1:" + std::to_string(redis.port());
}

deadbolt::config config_for(const std::string& url) {
  deadbolt::config cfg;
  cfg.url = url;
  cfg.command_timeout = 2s;
  return cfg;
}

// ACL SETUSER user on >pw resetkeys resetchannels -@all <rules>, sent as the default user.
void make_user(const deadbolt::test::redis_server& redis, const std::string& user, const deadbolt::acl_grants& grants) {
  deadbolt::test::io_thread io;
  deadbolt::client admin(io.executor(), config_for(url_of(redis, std::string(":") + admin_url_password)));
  std::vector<std::string> command{"ACL", "SETUSER", user, "reset", "on", ">pw", "resetkeys", "resetchannels", "-@all"};
  for (auto& rule : grants.rules()) command.push_back(rule);
  auto r = call<deadbolt::reply>([&](auto cb) { admin.async_command(command, cb); });
  REQUIRE_MESSAGE(!r.ec, r.ec.message());
  REQUIRE(r.value.text == "OK");
}

// What the server refused `user`: ACL LOG's entries for it, as "reason object" (empty: nothing).
std::string refused(const deadbolt::test::redis_server& redis, const std::string& user) {
  return deadbolt::test::refused_in_acl_log(redis.cli(std::string("--no-auth-warning -a 's3cret:p@ss' acl log 128")), user);
}

}  // namespace

TEST_CASE("acl_grants: a semaphore and its woken waiter under exactly the kind's rule") {
  deadbolt::test::redis_server redis;
  deadbolt::acl_grants grants;
  grants.add(acl_object::semaphore, "acl-sem");
  make_user(redis, "acl-sem-user", grants);
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(url_of(redis, "acl-sem-user:pw")));
  deadbolt::client b(io.executor(), config_for(url_of(redis, "acl-sem-user:pw")));
  auto sem = a.semaphore("acl-sem");
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_set_permits(1, cb); }).value);
  REQUIRE(call<bool>([&](auto cb) { sem.async_try_acquire(1, cb); }).value);
  auto waiting = std::async(std::launch::async, [&] {
    return call<bool>([&](auto cb) { b.semaphore("acl-sem").async_try_acquire(1, 10s, cb); });
  });
  std::this_thread::sleep_for(200ms);  // the waiter subscribed
  CHECK_FALSE(call([&](auto cb) { sem.async_release(1, cb); }).ec);
  const auto got = waiting.get();
  CHECK_FALSE(got.ec);
  CHECK(got.value);
  CHECK(call<std::int64_t>([&](auto cb) { sem.async_add_permits(2, cb); }).value == 2);
  CHECK(call<std::int64_t>([&](auto cb) { sem.async_drain_permits(cb); }).value == 2);
  CHECK(refused(redis, "acl-sem-user").empty());
  // another name: refused
  const auto other = call<bool>([&](auto cb) { a.semaphore("acl-sem-other").async_try_set_permits(1, cb); });
  CHECK(other.ec == deadbolt::errc::permission_denied);
  CHECK(refused(redis, "acl-sem-user").find("acl-sem-other") != std::string::npos);  // (the log is read right)
}

TEST_CASE("acl_grants: a count-down latch, a reentrant lock and a braced name's latch under their rules") {
  deadbolt::test::redis_server redis;
  deadbolt::acl_grants grants;
  grants.add(acl_object::count_down_latch, "acl-latch");
  grants.add(acl_object::count_down_latch, "{acl}:latch");  // its channel has other braces (§10)
  grants.add(acl_object::lock, "acl-lock");
  make_user(redis, "acl-multi-user", grants);
  deadbolt::test::io_thread io;
  deadbolt::client a(io.executor(), config_for(url_of(redis, "acl-multi-user:pw")));
  deadbolt::client b(io.executor(), config_for(url_of(redis, "acl-multi-user:pw")));
  for (const char* name : {"acl-latch", "{acl}:latch"}) {
    CAPTURE(name);
    auto latch = a.count_down_latch(name);
    REQUIRE(call<bool>([&](auto cb) { latch.async_try_set_count(1, cb); }).value);
    auto awaiting = std::async(std::launch::async, [&] {
      return call<bool>([&](auto cb) { b.count_down_latch(name).async_await(10s, cb); });
    });
    std::this_thread::sleep_for(200ms);
    CHECK(call<std::int64_t>([&](auto cb) { latch.async_count_down(cb); }).value == 0);
    const auto reached = awaiting.get();
    CHECK_FALSE(reached.ec);
    CHECK(reached.value);
  }
  auto lock = a.lock("acl-lock");
  REQUIRE(call<bool>([&](auto cb) { lock.async_try_lock(1, cb); }).value);
  auto waiting = std::async(std::launch::async, [&] {
    return call<bool>([&](auto cb) { b.lock("acl-lock").async_try_lock(2, 10s, 0ms, cb); });
  });
  std::this_thread::sleep_for(200ms);
  CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }).ec);
  const auto got = waiting.get();
  CHECK_FALSE(got.ec);
  CHECK(got.value);
  CHECK(call<bool>([&](auto cb) { b.lock("acl-lock").async_force_unlock(cb); }).value);
  CHECK(refused(redis, "acl-multi-user").empty());
  const auto other = call<bool>([&](auto cb) { a.lock("acl-lock-other").async_try_lock(1, cb); });
  CHECK(other.ec == deadbolt::errc::permission_denied);
  CHECK(refused(redis, "acl-multi-user").find("acl-lock-other") != std::string::npos);
}
