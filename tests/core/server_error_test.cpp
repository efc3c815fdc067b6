// The one classifier of error replies (src/base/server_error.cpp), without a server: each code the
// lock paths meet, and errors raised inside a script in the words of Redis 6, 7.0 and 7.2.
#include <doctest/doctest.h>

#include "base/server_error.hpp"
#include "deadbolt/error.hpp"

using deadbolt::errc;
using deadbolt::detail::server_error_code;
using deadbolt::detail::server_error_kind;
using deadbolt::detail::server_error_kind_of;

TEST_CASE("server errors: each code keeps its meaning") {
  const struct {
    const char* text;
    server_error_kind kind;
    errc code;
  } cases[] = {
      {"NOPERM this user has no permissions to access one of the keys used as arguments",
       server_error_kind::no_permission, errc::permission_denied},
      {"NOPERM User locker has no permissions to run the 'evalsha' command", server_error_kind::no_permission,
       errc::permission_denied},
      {"READONLY You can't write against a read only replica.", server_error_kind::read_only, errc::not_master},
      {"MASTERDOWN Link with MASTER is down and replica-serve-stale-data is set to 'no'.",
       server_error_kind::read_only, errc::not_master},
      {"MOVED 3999 127.0.0.1:6381", server_error_kind::moved, errc::needs_cluster_url},
      {"ASK 3999 127.0.0.1:6381", server_error_kind::ask, errc::needs_cluster_url},
      {"TRYAGAIN Multiple keys request during rehashing of slot", server_error_kind::try_again, errc::cluster_down},
      {"CLUSTERDOWN The cluster is down", server_error_kind::cluster_down, errc::cluster_down},
      {"CROSSSLOT Keys in request don't hash to the same slot", server_error_kind::cross_slot, errc::cross_slot},
      {"WRONGTYPE Operation against a key holding the wrong kind of value", server_error_kind::wrong_type,
       errc::wrong_type},
      {"LOADING Redis is loading the dataset in memory", server_error_kind::loading, errc::server_busy},
      {"BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.",
       server_error_kind::busy, errc::server_busy},
      {"BUSYKEY Target key name already exists.", server_error_kind::other, errc::server_error},
      {"NOSCRIPT No matching script. Please use EVAL.", server_error_kind::noscript, errc::server_error},
      {"WRONGPASS invalid username-password pair or user is disabled.", server_error_kind::auth, errc::auth_failed},
      {"NOAUTH Authentication required.", server_error_kind::auth, errc::auth_failed},
      {"ERR AUTH <password> called without any password configured for the default user", server_error_kind::auth,
       errc::auth_failed},
      {"ERR invalid password", server_error_kind::auth, errc::auth_failed},
      {"NOPROTO unsupported protocol version", server_error_kind::no_protocol, errc::server_error},
      {"ERR unknown command 'HELLO', with args beginning with: '3' ", server_error_kind::unknown_command,
       errc::server_error},
      {"ERR Unknown subcommand or wrong number of arguments for 'SHARDS'. Try CLUSTER HELP.",
       server_error_kind::unknown_command, errc::server_error},
      {"ERR something odd", server_error_kind::other, errc::server_error},
      {"OOM command not allowed when used memory > 'maxmemory'.", server_error_kind::other, errc::server_error},
      {"", server_error_kind::other, errc::server_error},
      {"MOVEDX 1 127.0.0.1:1", server_error_kind::other, errc::server_error},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(server_error_kind_of(c.text) == c.kind);
    CHECK(server_error_code(c.text) == c.code);
  }
}

TEST_CASE("server errors: raised inside a script, as Redis 6, 7.0 and 7.2 word them") {
  const struct {
    const char* text;
    errc code;
  } cases[] = {
      // Redis 7.0: the command's own code, then where in the script; an ACL refusal as an ERR.
      {"WRONGTYPE Operation against a key holding the wrong kind of value script: ad66cc4f, on @user_script:1.",
       errc::wrong_type},
      {"READONLY You can't write against a read only replica. script: ee5bed0f, on @user_script:1.",
       errc::not_master},
      {"ERR The user executing the script can't publish to the channel mentioned in the command script: "
       "04adc8e6, on @user_script:1.",
       errc::permission_denied},
      {"ERR The user executing the script can't access at least one of the keys mentioned in the command "
       "arguments script: 51c16fd9, on @user_script:1.",
       errc::permission_denied},
      {"ERR The user executing the script can't run this command or subcommand script: 58563b82, on @user_script:1.",
       errc::permission_denied},
      {"ERR Unknown Redis command called from script script: 2146a12e, on @user_script:1.", errc::server_error},
      // Redis 7.2+.
      {"ERR ACL failure in script: User u has no permissions to run the 'publish' command script: 8a2f, on "
       "@user_script:4.",
       errc::permission_denied},
      // Before Redis 7: wrapped in "Error running script", the inner error with its code or ACL words.
      {"ERR Error running script (call to f_ad66cc4f): @user_script:1: WRONGTYPE Operation against a key holding "
       "the wrong kind of value",
       errc::wrong_type},
      {"ERR Error running script (call to f_ad66cc4f): @user_script:1: @user_script: 1: The user executing the "
       "script can't run this command or subcommand",
       errc::permission_denied},
      {"ERR Error running script (call to f_ad66cc4f): @user_script:1: NOPERM this user has no permissions",
       errc::permission_denied},
      {"ERR Error running script (call to f_ad66cc4f): @user_script:1: ERR something odd", errc::server_error},
      {"ERR Error running script (call to f_ad66cc4f): @user_script:1: ", errc::server_error},
      {"ERR Error running script (call to f_ad66cc4f)", errc::server_error},
  };
  for (const auto& c : cases) {
    CAPTURE(c.text);
    CHECK(server_error_code(c.text) == c.code);
  }
}
