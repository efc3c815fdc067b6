// A package consumer (tests/consumer/run builds it three ways: find_package, pkg-config and
// add_subdirectory). It needs no server: it checks that the public headers compile outside the
// project and that every library links — the client (config, URL parsing, error category, lock
// objects, the blocking client), the RESP codec and the platform port.
#include <cstdio>
#include <string>
#include <system_error>

#include <deadbolt/deadbolt.hpp>
#include <deadbolt/port/hooks.hpp>
#include <deadbolt/resp/decoder.hpp>

#include <asio.hpp>  // deadbolt's headers include only the Asio parts they use

#ifndef DEADBOLT_CONSUMER
#define DEADBOLT_CONSUMER "pkg-config"
#endif

namespace {

int failures = 0;

void check(bool ok, const char* what) {
  std::printf("  %s: %s\n", ok ? "ok  " : "FAIL", what);
  if (!ok) ++failures;
}

}  // namespace

int main() {
  std::printf("deadbolt consumer: %s\n", DEADBOLT_CONSUMER);

  // A config and its validation (URL parsing lives in libdeadbolt).
  deadbolt::config cfg;
  cfg.url = "redis://user:secret@127.0.0.1:6390/2";
  cfg.client_name = "consumer";
  deadbolt::endpoint ep;
  const std::error_code ec = cfg.validate(ep);
  check(!ec, "config::validate accepts a good URL");
  check(ep.port == 6390 && ep.database == 2 && ep.user == "user", "the URL's parts");

  deadbolt::config bad;
  bad.url = "http://example.com";
  deadbolt::endpoint unused;
  const std::error_code bad_ec = bad.validate(unused);
  check(bad_ec == deadbolt::errc::invalid_url, "config::validate rejects a bad URL");
  check(!bad_ec.message().empty(), "deadbolt's error category names the error");

  // Lock objects: building the client and its locks sends nothing.
  {
    asio::io_context io;
    {
      deadbolt::client client(io.get_executor(), cfg);
      check(!client.config_error(), "client built from the config");
      deadbolt::reentrant_lock lock = client.lock("orders");
      deadbolt::fenced_lock fenced = client.fenced_lock("orders");
      check(lock.name() == "orders" && fenced.name() == "orders", "reentrant_lock and fenced_lock objects");
    }
    io.run();  // runs the destructor's shutdown; nothing else is pending
  }
  {
    deadbolt::blocking_client client(cfg);  // starts and joins its loop thread, sends nothing
    deadbolt::blocking_lock lock = client.lock("orders");
    check(lock.name() == "orders", "blocking_client and blocking_lock objects");
  }

  // The RESP codec (libdeadbolt_resp) and the port (libdeadbolt_port).
  deadbolt::resp::decoder dec;
  const deadbolt::resp::parse_result r = dec.next("+OK\r\n");
  check(r.what == deadbolt::resp::parse_result::kind::node && r.node.value == "OK", "RESP decoder");
  check(deadbolt::port::monotonic_ns() > 0, "port hooks");

  std::printf("deadbolt consumer: %s\n", failures == 0 ? "ok" : "FAILED");
  return failures == 0 ? 0 : 1;
}
