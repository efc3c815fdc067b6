// TLS that cannot work ends with a clear error, at once, never a hang: a wrong CA, a wrong host name,
// an expired certificate, TLS to a plaintext port and plaintext to a TLS port, a server that wants a
// client certificate; and the configuration errors (fixture "tls").
#include <doctest/doctest.h>

#include <string>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/asio.hpp"
#include "support/sync.hpp"

#include <asio/ssl/error.hpp>
#include "tls/tls_servers.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;

namespace tls_failures_test {

// One try_lock: its error, or none when it locked. The call's own limit (10 s) is well inside the
// config's 60 s command timeout: an error only that deadline would bring fails the call instead.
std::error_code try_lock(const deadbolt::config& cfg) {
  deadbolt::test::io_thread io;
  deadbolt::client c(io.executor(), cfg);
  auto lock = c.lock("tls-failure");
  auto got = call<bool>([&](auto cb) { lock.async_try_lock(1, 0ms, 5s, cb); }, 10s);
  if (!got.ec) CHECK(call([&](auto cb) { lock.async_unlock(1, cb); }).ec == std::error_code());
  return got.ec;
}

bool says(const std::error_code& ec, const std::string& words) {
  return ec.message().find(words) != std::string::npos;
}

}  // namespace tls_failures_test

using tls_failures_test::says;
using tls_failures_test::try_lock;

TEST_CASE("TLS: a certificate from a CA we do not trust") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("tls");
  cfg.tls.ca_file = servers.file("other-ca.pem");
  const std::error_code ec = try_lock(cfg);
  CHECK(ec.category() == deadbolt::tls_verify_category());
  CHECK_MESSAGE(says(ec, "certificate verify failed"), ec.message());
}

TEST_CASE("TLS: turning verification off accepts that certificate") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("tls");
  cfg.tls.ca_file = servers.file("other-ca.pem");
  cfg.tls.server_name = "not-this-server.invalid";
  cfg.tls.verify_peer = false;
  CHECK_FALSE(try_lock(cfg));
}

TEST_CASE("TLS: the certificate names localhost and 127.0.0.1, not another host") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("tls");
  cfg.tls.server_name = "localhost";
  CHECK_FALSE(try_lock(cfg));
  cfg.tls.server_name = "not-this-server.invalid";
  const std::error_code ec = try_lock(cfg);
  CHECK(ec.category() == deadbolt::tls_verify_category());
  CHECK_MESSAGE(says(ec, "hostname mismatch"), ec.message());
}

TEST_CASE("TLS: an expired server certificate") {
  deadbolt::test::tls_servers servers;
  const std::error_code ec = try_lock(servers.config_for("expired"));
  CHECK(ec.category() == deadbolt::tls_verify_category());
  CHECK_MESSAGE(says(ec, "certificate has expired"), ec.message());
}

TEST_CASE("TLS to a plaintext port, and plaintext to a TLS port") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("tls");
  cfg.command_timeout = 3s;  // these two are not permanent (a server may be restarting): the deadline ends them
  cfg.url = "rediss://127.0.0.1:" + std::to_string(servers.plain_port());
  std::error_code ec = try_lock(cfg);
  // Redis waits for a line end in the TLS greeting's bytes; when a random byte is one it answers an
  // error, which is no TLS record (OpenSSL: "wrong version number" or "packet length too long").
  CHECK_MESSAGE((ec == errc::tls_handshake_timed_out || ec.category() == asio::error::get_ssl_category()),
                ec.message());
  cfg.url = "redis://127.0.0.1:" + std::to_string(servers.port("tls"));
  ec = try_lock(cfg);
  CHECK_MESSAGE(ec == errc::closed_during_login, ec.message());
}

TEST_CASE("mutual TLS: refused without a client certificate, accepted with one") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("mtls");
  const std::error_code ec = try_lock(cfg);
  CHECK(ec);
  CHECK_MESSAGE(says(ec, "certificate"), ec.message());  // OpenSSL: "... alert certificate required"
  cfg.tls.cert_file = servers.file("client.pem");
  cfg.tls.key_file = servers.file("client.key");
  CHECK_FALSE(try_lock(cfg));
}

TEST_CASE("TLS configuration errors are found by config::validate") {
  deadbolt::test::tls_servers servers;
  auto cfg = servers.config_for("tls");
  deadbolt::endpoint ep;
  REQUIRE_FALSE(cfg.validate(ep));
  CHECK(ep.tls);
  CHECK(cfg.why_invalid().empty());
  // Each refusal names the setting, its file and what is wrong with it (config::why_invalid).
  cfg.tls.ca_file = servers.file("no-such-ca.pem");
  CHECK(cfg.validate(ep) == errc::tls_config_invalid);
  CHECK(cfg.why_invalid() == "tls.ca_file '" + servers.file("no-such-ca.pem") + "': cannot read it: No such file or directory");
  cfg.tls.ca_file = servers.file("client.key");  // a key, no certificate
  CHECK(cfg.validate(ep) == errc::tls_config_invalid);
  CHECK_MESSAGE(cfg.why_invalid().rfind("tls.ca_file '" + servers.file("client.key") + "': holds no PEM certificate", 0) == 0,
                cfg.why_invalid());
  cfg.tls.ca_file = servers.file("ca.pem");
  cfg.tls.cert_file = servers.file("client.pem");  // no key
  CHECK(cfg.validate(ep) == errc::tls_config_invalid);
  CHECK(cfg.why_invalid() == "tls.cert_file is given without key_file: give both or neither");
  cfg.tls.key_file = servers.file("other-ca.key");  // not the certificate's key
  CHECK(cfg.validate(ep) == errc::tls_config_invalid);
  CHECK(cfg.why_invalid() == "tls.key_file '" + servers.file("other-ca.key") + "': does not match cert_file '" +
                                 servers.file("client.pem") + "'");
  cfg.tls.key_file = servers.file("client.pem");  // no key in it
  CHECK(cfg.validate(ep) == errc::tls_config_invalid);
  CHECK_MESSAGE(cfg.why_invalid().rfind("tls.key_file '" + servers.file("client.pem") + "': is not a PEM private key", 0) == 0,
                cfg.why_invalid());
}
