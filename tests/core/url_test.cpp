// parse_url, config::validate and endpoint::describe: every accepted form, and every rejected one
// reported as an error code (never an exception, never a half-filled endpoint).
#include <doctest/doctest.h>

#include <chrono>
#include <cmath>
#include <ostream>  // doctest prints std::error_code through operator<<
#include <string>

#include "deadbolt/config.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/url.hpp"

using namespace std::chrono_literals;
using deadbolt::endpoint;
using deadbolt::errc;

namespace {

endpoint parse_ok(const std::string& url) {
  endpoint ep;
  const std::error_code ec = deadbolt::parse_url(url, ep);
  INFO("url: " << url);
  CHECK_MESSAGE(!ec, ec.message());
  return ep;
}

}  // namespace

TEST_CASE("parse_url: tcp forms") {
  SUBCASE("rediss:// and rediss+cluster:// are the same forms over TLS") {
    const endpoint ep = parse_ok("rediss://u:p@cache.example:6380/2");
    CHECK(ep.tls);
    CHECK(ep.host == "cache.example");
    CHECK(ep.port == 6380);
    CHECK(ep.database == 2);
    CHECK_FALSE(parse_ok("redis://cache.example").tls);
    const endpoint cluster = parse_ok("rediss+cluster://10.0.0.1:7000,10.0.0.2:7001");
    CHECK(cluster.tls);
    CHECK(cluster.cluster_seeds.size() == 2);
  }
  SUBCASE("valkey://, valkeys://, valkey+cluster:// and valkey+sentinel:// are their redis twins") {
    const endpoint plain = parse_ok("valkey://u:p@cache.example:6380/2");
    CHECK_FALSE(plain.tls);
    CHECK(plain.host == "cache.example");
    CHECK(plain.port == 6380);
    CHECK(plain.database == 2);
    CHECK(plain.user == "u");
    CHECK(parse_ok("valkeys://cache.example").tls);
    const endpoint cluster = parse_ok("valkey+cluster://127.0.0.1:7000,127.0.0.1:7001");
    CHECK_FALSE(cluster.tls);
    CHECK(cluster.cluster_seeds.size() == 2);
    CHECK(parse_ok("valkeys+cluster://127.0.0.1:7000").tls);
    const endpoint sentinel = parse_ok("valkeys+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster/1");
    CHECK(sentinel.tls);
    CHECK(sentinel.sentinels.size() == 2);
    CHECK(sentinel.sentinel_master == "mymaster");
    CHECK(sentinel.database == 1);
    endpoint ep;
    CHECK(deadbolt::parse_url("valkeyx://127.0.0.1", ep) == errc::invalid_url);
    CHECK(deadbolt::parse_url("valkey+unix:///tmp/s", ep) == errc::invalid_url);
  }
  SUBCASE("host only: default port, no login, database 0") {
    const endpoint ep = parse_ok("redis://cache.example");
    CHECK(ep.kind == endpoint::transport::tcp);
    CHECK(ep.host == "cache.example");
    CHECK(ep.port == 6379);
    CHECK(ep.user.empty());
    CHECK(ep.password.empty());
    CHECK(ep.database == 0);
    CHECK(ep.path.empty());
  }
  SUBCASE("host and port") {
    const endpoint ep = parse_ok("redis://10.0.0.7:6380");
    CHECK(ep.host == "10.0.0.7");
    CHECK(ep.port == 6380);
    CHECK(parse_ok("redis://h:1").port == 1);
    CHECK(parse_ok("redis://h:65535").port == 65535);
  }
  SUBCASE("user and password") {
    const endpoint ep = parse_ok("redis://alice:s3cret@host:7000");
    CHECK(ep.user == "alice");
    CHECK(ep.password == "s3cret");
    CHECK(ep.host == "host");
    CHECK(ep.port == 7000);
  }
  SUBCASE("user without password") {
    const endpoint ep = parse_ok("redis://alice@host");
    CHECK(ep.user == "alice");
    CHECK(ep.password.empty());
  }
  SUBCASE("password without user logs in as default") {
    const endpoint ep = parse_ok("redis://:s3cret@host");
    CHECK(ep.user == "default");
    CHECK(ep.password == "s3cret");
  }
  SUBCASE("an empty userinfo sets nothing") {
    const endpoint ep = parse_ok("redis://:@host");
    CHECK(ep.user.empty());
    CHECK(ep.password.empty());
  }
  SUBCASE("percent-encoded credentials") {
    const endpoint ep = parse_ok("redis://us%40er%3Ax:p%3a%2F%25%20w@host");
    CHECK(ep.user == "us@er:x");
    CHECK(ep.password == "p:/% w");
    CHECK(ep.host == "host");
  }
  SUBCASE("a raw '@' in the password: the last '@' ends the userinfo") {
    const endpoint ep = parse_ok("redis://u:p@ss@host:6390");
    CHECK(ep.user == "u");
    CHECK(ep.password == "p@ss");
    CHECK(ep.host == "host");
    CHECK(ep.port == 6390);
  }
  SUBCASE("a raw ':' in the password: the first ':' ends the user") {
    const endpoint ep = parse_ok("redis://u:a:b@host");
    CHECK(ep.user == "u");
    CHECK(ep.password == "a:b");
  }
  SUBCASE("database") {
    CHECK(parse_ok("redis://host/3").database == 3);
    CHECK(parse_ok("redis://host:6380/15").database == 15);
    CHECK(parse_ok("redis://host/0").database == 0);
    CHECK(parse_ok("redis://host/").database == 0);
    const endpoint ep = parse_ok("redis://u:p@host:1234/9");
    CHECK(ep.user == "u");
    CHECK(ep.password == "p");
    CHECK(ep.port == 1234);
    CHECK(ep.database == 9);
  }
  SUBCASE("bracketed IPv6") {
    endpoint ep = parse_ok("redis://[::1]:6380");
    CHECK(ep.host == "::1");
    CHECK(ep.port == 6380);
    ep = parse_ok("redis://[fe80::1:2]");
    CHECK(ep.host == "fe80::1:2");
    CHECK(ep.port == 6379);
    ep = parse_ok("redis://:pw@[::1]:7001/2");
    CHECK(ep.user == "default");
    CHECK(ep.password == "pw");
    CHECK(ep.host == "::1");
    CHECK(ep.port == 7001);
    CHECK(ep.database == 2);
  }
}

TEST_CASE("parse_url: unix socket forms") {
  SUBCASE("path") {
    const endpoint ep = parse_ok("unix:///var/run/redis.sock");
    CHECK(ep.kind == endpoint::transport::unix_socket);
    CHECK(ep.path == "/var/run/redis.sock");
    CHECK(ep.database == 0);
    CHECK(ep.user.empty());
  }
  SUBCASE("database query") {
    const endpoint ep = parse_ok("unix:///tmp/r.sock?db=2");
    CHECK(ep.path == "/tmp/r.sock");
    CHECK(ep.database == 2);
  }
  SUBCASE("credentials") {
    const endpoint ep = parse_ok("unix://user:pw@/tmp/r.sock");
    CHECK(ep.user == "user");
    CHECK(ep.password == "pw");
    CHECK(ep.path == "/tmp/r.sock");
  }
  SUBCASE("password only, encoded, with a database") {
    const endpoint ep = parse_ok("unix://:p%40w@/tmp/r.sock?db=5");
    CHECK(ep.user == "default");
    CHECK(ep.password == "p@w");
    CHECK(ep.path == "/tmp/r.sock");
    CHECK(ep.database == 5);
  }
  SUBCASE("an '@' inside the path is part of the path") {
    const endpoint ep = parse_ok("unix:///tmp/a@b.sock");
    CHECK(ep.path == "/tmp/a@b.sock");
    CHECK(ep.user.empty());
  }
}

TEST_CASE("parse_url: invalid forms are errc::invalid_url and leave the endpoint alone") {
  const char* const bad[] = {
      "",
      "host:6379",                 // missing scheme
      "127.0.0.1",
      "//host",
      "redis:/host",
      "redis:host",
      "rediss:/host:6379",
      "rediss+sentinel://host",    // Sentinel is not supported yet
      "http://host",
      "tcp://host",
      "redis://",                  // empty host
      "redis://:6379",
      "redis://user:pw@",
      "redis://user:pw@:6379",
      "redis:///3",
      "redis://host:0",            // port out of range
      "redis://host:65536",
      "redis://host:99999999999999999999",
      "redis://host:abc",
      "redis://host:",
      "redis://host:-1",
      "redis://host:+80",
      "redis://host:80x",
      "redis://host: 80",
      "redis://host/abc",          // bad database
      "redis://host/-1",
      "redis://host/1x",
      "redis://host/99999999999",
      "redis://host/1/2",
      "redis://host:6379/ 1",
      "redis://u%4@host",          // bad percent escapes
      "redis://u%@host",
      "redis://u%zz@host",
      "redis://u%g1@host",
      "redis://u:p%@host",
      "redis://u:p%2@host",
      "redis://u:%x0@host",
      "redis://[::1",              // bad brackets
      "redis://[::1]x",
      "redis://[::1]:",
      "redis://[::1]:0",
      "redis://[]:6379",
      "redis://[]",
      "redis://::1",               // unbracketed IPv6: where would the port be?
      "redis://fe80::1:6379",
      "redis://my host",           // characters a host cannot have
      "redis://host?db=1",
      "redis://host#x",
      "redis://ho[st",
      "unix://",                   // unix: a path is required and must be absolute
      "unix:///",
      "unix://relative.sock",
      "unix://u:p@relative.sock",
      "unix://u%zz@/tmp/r.sock",
      "unix:///tmp/r.sock?db=",    // bad query
      "unix:///tmp/r.sock?db=x",
      "unix:///tmp/r.sock?db=-1",
      "unix:///tmp/r.sock?database=1",
      "unix:///tmp/r.sock?db=1&x=2",
  };
  for (const char* url : bad) {
    INFO("url: \"" << url << "\"");
    endpoint ep;
    ep.host = "untouched";
    ep.port = 1111;
    const std::error_code ec = deadbolt::parse_url(url, ep);
    CHECK(ec == errc::invalid_url);
    CHECK(ep.host == "untouched");
    CHECK(ep.port == 1111);
  }
}

TEST_CASE("endpoint::describe") {
  CHECK(parse_ok("redis://host").describe() == "host:6379");
  CHECK(parse_ok("redis://u:p@10.1.2.3:7000/4").describe() == "10.1.2.3:7000");
  CHECK(parse_ok("redis://[::1]:6380").describe() == "[::1]:6380");
  CHECK(parse_ok("unix:///tmp/r.sock?db=1").describe() == "/tmp/r.sock");
  CHECK(endpoint{}.describe() == "127.0.0.1:6379");
}

TEST_CASE("config::why_invalid names the field and the reason of what validate refuses") {
  deadbolt::config cfg;
  CHECK(cfg.why_invalid().empty());
  struct bad_value {
    void (*set)(deadbolt::config&);
    const char* says;
  };
  const bad_value cases[] = {
      {[](deadbolt::config& c) { c.watchdog_timeout = 10ms; }, "watchdog_timeout: must be at least 30ms"},
      {[](deadbolt::config& c) { c.command_timeout = 0ms; }, "command_timeout: must be more than 0"},
      {[](deadbolt::config& c) { c.reconnect_max = 10ms; }, "reconnect_max: must not be less than reconnect_min"},
      {[](deadbolt::config& c) { c.max_waiters = 0; }, "max_waiters: must be at least 1"},
      {[](deadbolt::config& c) { c.client_name = "two words"; }, "client_name: must not contain spaces or line breaks"},
      {[](deadbolt::config& c) { c.clock_drift_factor = 0.7; }, "clock_drift_factor: must be from 0 to less than 0.5"},
      {[](deadbolt::config& c) { c.lease_margin = 20s; },
       "lease_margin: with clock_drift_factor, must come to less than a third of watchdog_timeout"},
      {[](deadbolt::config& c) { c.url = "redis://host:99999"; }, "url: the port '99999' is not a number from 1 to 65535"},
      {[](deadbolt::config& c) { c.url = "http://host"; },
       "url: unknown scheme 'http' (redis://, redis+cluster://, redis+sentinel://, their valkey twins, or unix://)"},
  };
  for (const bad_value& c : cases) {
    deadbolt::config bad;
    c.set(bad);
    endpoint ep;
    CHECK(bad.validate(ep));  // the two answers agree
    CHECK(bad.why_invalid() == c.says);
  }
}

TEST_CASE("config::margin_of: the part of a lease the client does not count on") {
  deadbolt::config cfg;  // 1% + 2 ms
  CHECK(cfg.margin_of(30000ms) == 302ms);
  CHECK(cfg.margin_of(150ms) == 4ms);  // 1.5 ms of drift, rounded up
  CHECK(cfg.margin_of(0ms) == 2ms);
  cfg.clock_drift_factor = 0;
  cfg.lease_margin = 0ms;
  CHECK(cfg.margin_of(30000ms) == 0ms);
}

TEST_CASE("url text: a password is hidden, taken out or put in") {
  CHECK(deadbolt::redacted_url("redis://u:secret@h:1/2") == "redis://u:***@h:1/2");
  CHECK(deadbolt::redacted_url("redis://h:1") == "redis://h:1");
  CHECK(deadbolt::url_without_password("redis://u:secret@h:1") == "redis://u@h:1");
  CHECK(deadbolt::url_with_password("redis://u@h:1", "p w") == "redis://u:p%20w@h:1");
  CHECK(deadbolt::why_invalid_url("redis://[::1") == "the IPv6 address has no closing ']'");
}

TEST_CASE("config::validate") {
  SUBCASE("the defaults are valid and fill the endpoint") {
    deadbolt::config cfg;
    endpoint ep;
    CHECK_FALSE(cfg.validate(ep));
    CHECK(ep.host == "127.0.0.1");
    CHECK(ep.port == 6379);

    cfg.url = "unix://:pw@/tmp/x.sock?db=3";
    CHECK_FALSE(cfg.validate(ep));
    CHECK(ep.kind == endpoint::transport::unix_socket);
    CHECK(ep.path == "/tmp/x.sock");
    CHECK(ep.password == "pw");
    CHECK(ep.database == 3);
  }
  SUBCASE("numeric addresses need no resolver; a host name needs one") {
    deadbolt::config cfg;
    endpoint ep;
    cfg.url = "redis://127.0.0.1:6380";
    CHECK_FALSE(cfg.validate(ep));
    cfg.url = "redis://[::1]:6380";
    CHECK_FALSE(cfg.validate(ep));
    cfg.url = "redis://localhost:6380";
#if DEADBOLT_TEST_SYSTEM_RESOLVER
    CHECK_FALSE(cfg.validate(ep));
#else
    CHECK(cfg.validate(ep) == errc::no_resolver);
#endif
  }
  SUBCASE("a cluster URL needs a build with Redis Cluster support") {
    deadbolt::config cfg;
    cfg.url = "redis+cluster://127.0.0.1:7000,127.0.0.1:7001";
    endpoint ep;
#if DEADBOLT_TEST_CLUSTER
    CHECK_FALSE(cfg.validate(ep));
#else
    CHECK(cfg.validate(ep) == errc::not_built);
#endif
  }
  SUBCASE("a sentinel URL needs a build with Sentinel support") {
    deadbolt::config cfg;
    cfg.url = "redis+sentinel://127.0.0.1:26379,127.0.0.1:26380/mymaster";
    endpoint ep;
#if DEADBOLT_TEST_SENTINEL
    CHECK_FALSE(cfg.validate(ep));
#else
    CHECK(cfg.validate(ep) == errc::not_built);
#endif
  }
  SUBCASE("a TLS URL needs a build with TLS support; a CA file that is missing is tls_config_invalid") {
    deadbolt::config cfg;
    cfg.url = "rediss://127.0.0.1:6380";
    cfg.tls.ca_file = "/nonexistent/ca.pem";
    endpoint ep;
#if DEADBOLT_TEST_TLS
    CHECK(cfg.validate(ep) == errc::tls_config_invalid);
    cfg.tls.ca_file.clear();  // the system's store
    CHECK_FALSE(cfg.validate(ep));
    CHECK(ep.tls_context != nullptr);
#else
    CHECK(cfg.validate(ep) == errc::not_built);
#endif
  }
  SUBCASE("a bad URL is invalid_url, not invalid_config") {
    deadbolt::config cfg;
    cfg.url = "redis:host";
    endpoint ep;
    CHECK(cfg.validate(ep) == errc::invalid_url);
  }
  SUBCASE("the smallest accepted values") {
    deadbolt::config cfg;
    cfg.connect_timeout = 1ms;
    cfg.command_timeout = 1ms;
    cfg.watchdog_timeout = 30ms;
    cfg.reconnect_min = 1ms;
    cfg.reconnect_max = 1ms;
    cfg.max_channels = cfg.max_waiters = cfg.max_held_locks = 1;
    cfg.reply_limits.max_bulk_length = 512;
    cfg.reply_limits.max_depth = 2;
    cfg.reply_limits.max_elements = 16;
    cfg.client_name = "";
    endpoint ep;
    CHECK_FALSE(cfg.validate(ep));
  }
  SUBCASE("out-of-range values are invalid_config") {
    struct bad_case {
      const char* what;
      void (*apply)(deadbolt::config&);
    };
    const bad_case cases[] = {
        {"zero connect_timeout", [](deadbolt::config& c) { c.connect_timeout = 0ms; }},
        {"negative connect_timeout", [](deadbolt::config& c) { c.connect_timeout = -5ms; }},
        {"zero command_timeout", [](deadbolt::config& c) { c.command_timeout = 0ms; }},
        {"negative command_timeout", [](deadbolt::config& c) { c.command_timeout = -1ms; }},
        {"watchdog_timeout below 30 ms", [](deadbolt::config& c) { c.watchdog_timeout = 29ms; }},
        {"zero watchdog_timeout", [](deadbolt::config& c) { c.watchdog_timeout = 0ms; }},
        {"zero reconnect_min", [](deadbolt::config& c) { c.reconnect_min = 0ms; }},
        {"reconnect_max < reconnect_min", [](deadbolt::config& c) {
           c.reconnect_min = 100ms;
           c.reconnect_max = 99ms;
         }},
        {"zero max_channels", [](deadbolt::config& c) { c.max_channels = 0; }},
        {"zero max_waiters", [](deadbolt::config& c) { c.max_waiters = 0; }},
        {"zero max_held_locks", [](deadbolt::config& c) { c.max_held_locks = 0; }},
        {"tiny max_bulk_length", [](deadbolt::config& c) { c.reply_limits.max_bulk_length = 511; }},
        {"max_depth 1", [](deadbolt::config& c) { c.reply_limits.max_depth = 1; }},
        {"max_elements 15", [](deadbolt::config& c) { c.reply_limits.max_elements = 15; }},
        {"client_name with a space", [](deadbolt::config& c) { c.client_name = "my client"; }},
        {"client_name with CR", [](deadbolt::config& c) { c.client_name = "a\rb"; }},
        {"client_name with LF", [](deadbolt::config& c) { c.client_name = "a\n"; }},
        {"negative lease_margin", [](deadbolt::config& c) { c.lease_margin = -1ms; }},
        {"negative clock_drift_factor", [](deadbolt::config& c) { c.clock_drift_factor = -0.01; }},
        {"clock_drift_factor 0.5", [](deadbolt::config& c) { c.clock_drift_factor = 0.5; }},
        {"clock_drift_factor NaN", [](deadbolt::config& c) { c.clock_drift_factor = std::nan(""); }},
        {"a margin of a third of the watchdog lease", [](deadbolt::config& c) {
           c.watchdog_timeout = 3000ms;
           c.clock_drift_factor = 0;
           c.lease_margin = 1000ms;
         }},
        {"drift and margin together a third of the watchdog lease", [](deadbolt::config& c) {
           c.watchdog_timeout = 1000ms;
           c.clock_drift_factor = 0.3;
           c.lease_margin = 40ms;
         }},
    };
    for (const bad_case& bc : cases) {
      INFO(bc.what);
      deadbolt::config cfg;
      bc.apply(cfg);
      endpoint ep;
      CHECK(cfg.validate(ep) == errc::invalid_config);
    }
  }
  SUBCASE("error codes carry the deadbolt category and a message") {
    const std::error_code ec = errc::invalid_config;
    CHECK(std::string(ec.category().name()) == "deadbolt");
    CHECK(ec.message() == "invalid configuration");
    CHECK(std::error_code(errc::invalid_url).message() == "invalid server URL");
  }
}
