// The session state machine, driven without sockets: what it asks for on the way to a usable
// connection, what the login sends and what each error reply means, the backoff between attempts,
// timeouts, and the address source asked before every connect.
#include <doctest/doctest.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/error.hpp"
#include "wire/address_source.hpp"
#include "wire/session_fsm.hpp"

#include "support/encoded_command.hpp"

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;
using deadbolt::errc;
using fsm = detail::session_fsm;
using act = fsm::action::kind;

namespace {

using test_support::cmd;

detail::server_address numeric(std::string host, std::uint16_t port) {
  detail::server_address a;
  a.host = std::move(host);
  a.port = port;
  a.numeric = true;
  return a;
}

detail::server_address named(std::string host, std::uint16_t port) {
  detail::server_address a = numeric(std::move(host), port);
  a.numeric = false;
  return a;
}

detail::server_address unix_socket(std::string path) {
  detail::server_address a;
  a.kind = detail::server_address::transport::unix_socket;
  a.path = std::move(path);
  return a;
}

detail::session_settings settings(std::string password = "", int database = 0, std::string user = "") {
  detail::session_settings s;
  s.connect_timeout_ms = 5000;
  s.reconnect_min_ms = 50;
  s.reconnect_max_ms = 2000;
  s.login.user = std::move(user);
  s.login.password = std::move(password);
  s.login.client_name = "deadbolt";
  s.login.database = database;
  return s;
}

std::string describe(const fsm::action& a) {
  auto where = [&a] {
    if (a.where == nullptr) return std::string("?");
    if (a.where->kind == detail::server_address::transport::unix_socket) return a.where->path;
    return a.where->host + ":" + std::to_string(a.where->port);
  };
  switch (a.what) {
    case act::none: return "none";
    case act::arm_timer: return "arm_timer " + std::to_string(a.delay_ms);
    case act::cancel_timer: return "cancel_timer";
    case act::get_address: return "get_address";
    case act::resolve: return "resolve " + where();
    case act::connect: return "connect " + where();
    case act::handshake: return "handshake";
    case act::log_in: return "log_in";
    case act::ready: return "ready";
    case act::disconnect: return "disconnect";
  }
  return "?";
}

// Takes every queued action. Their `where` stays valid until the next event.
std::vector<fsm::action> drain(fsm& f) {
  std::vector<fsm::action> out;
  for (auto a = f.next(); a.what != act::none; a = f.next()) out.push_back(a);
  return out;
}

std::string describe(const std::vector<fsm::action>& actions) {
  std::string out;
  for (const auto& a : actions) out += (out.empty() ? "" : ", ") + describe(a);
  return out;
}

std::string next_actions(fsm& f) { return describe(drain(f)); }

// The login commands of the current attempt, as they go on the wire.
std::string login_bytes(const fsm& f) {
  std::string out;
  resp::encoder e(out);
  for (std::size_t i = 0; i < f.plan().size; ++i) f.encode_login_step(i, e);
  return out;
}

// Takes a fresh machine to logging_in on 127.0.0.1:6379.
void up_to_login(fsm& f) {
  f.start();
  REQUIRE(next_actions(f) == "arm_timer 5000, get_address");
  f.on_address({}, numeric("127.0.0.1", 6379));
  REQUIRE(next_actions(f) == "connect 127.0.0.1:6379");
  f.on_connected({});
  REQUIRE(next_actions(f) == "log_in");
  REQUIRE(f.current() == fsm::state::logging_in);
}

// The one disconnect and the backoff that follow a failure.
struct failure {
  fsm::action disconnect;
  std::int64_t backoff_ms = -1;
};
failure take_failure(fsm& f) {
  const auto actions = drain(f);
  REQUIRE(actions.size() == 2);
  REQUIRE(actions[0].what == act::disconnect);
  REQUIRE(actions[1].what == act::arm_timer);
  CHECK(f.current() == fsm::state::backing_off);
  return {actions[0], actions[1].delay_ms};
}

failure login_fails_with(const detail::session_settings& s, std::string_view error_text) {
  fsm f(s, 42);
  up_to_login(f);
  f.on_login_error(0, error_text);
  return take_failure(f);
}

const std::error_code refused(ECONNREFUSED, std::system_category());

}  // namespace

TEST_CASE("happy path: address, connect, HELLO 3, ready") {
  fsm f(settings(), 1);
  CHECK(f.current() == fsm::state::idle);
  CHECK(next_actions(f).empty());
  up_to_login(f);
  CHECK(f.carries_bytes());
  CHECK_FALSE(f.ready());
  CHECK(login_bytes(f) == cmd("HELLO", 3, "SETNAME", "deadbolt"));
  f.on_login_ok(0);
  CHECK(next_actions(f) == "cancel_timer, ready");
  CHECK(f.ready());
  CHECK(f.protocol() == 3);
  CHECK_FALSE(f.last_error());
  CHECK(f.expired_unsent_error() == errc::timed_out);
  f.start();  // only from idle
  CHECK(next_actions(f).empty());
}

TEST_CASE("the login: password, ACL user, database; ready only when every step answered") {
  SUBCASE("password only: the default user") {
    fsm f(settings("pw", 3), 1);
    up_to_login(f);
    CHECK(login_bytes(f) ==
          cmd("HELLO", 3, "AUTH", "default", "pw", "SETNAME", "deadbolt") + cmd("SELECT", 3));
    f.on_login_ok(0);
    CHECK(next_actions(f).empty());  // SELECT still unanswered
    CHECK_FALSE(f.ready());
    f.on_login_ok(1);
    CHECK(next_actions(f) == "cancel_timer, ready");
  }
  SUBCASE("an ACL user") {
    fsm f(settings("pw", 0, "locker"), 1);
    up_to_login(f);
    CHECK(login_bytes(f) == cmd("HELLO", 3, "AUTH", "locker", "pw", "SETNAME", "deadbolt"));
  }
  SUBCASE("a unix socket connects without resolving") {
    fsm f(settings(), 1);
    f.start();
    drain(f);
    f.on_address({}, unix_socket("/run/redis.sock"));
    CHECK(next_actions(f) == "connect /run/redis.sock");
  }
}

TEST_CASE("a host name is resolved; its addresses are tried in order") {
  fsm f(settings(), 1);
  f.start();
  drain(f);
  f.on_address({}, named("localhost", 6380));
  CHECK(next_actions(f) == "resolve localhost:6380");
  CHECK(f.current() == fsm::state::resolving);
  f.on_resolved({}, {numeric("::1", 6380), numeric("127.0.0.1", 6380)});
  CHECK(next_actions(f) == "connect ::1:6380");
  f.on_connected(refused);
  CHECK(next_actions(f) == "connect 127.0.0.1:6380");
  CHECK(f.expired_unsent_error() == refused);  // a request that expires now hears why
  f.on_connected({});
  CHECK(next_actions(f) == "log_in");
}

TEST_CASE("a failed resolve, or every address refusing, is a failed attempt") {
  fsm f(settings(), 1);
  f.start();
  drain(f);
  f.on_address({}, named("localhost", 6380));
  drain(f);
  const std::error_code not_found(EHOSTUNREACH, std::system_category());
  f.on_resolved(not_found, {});
  CHECK(take_failure(f).disconnect.error == not_found);

  f.on_timer();  // the backoff ends
  CHECK(next_actions(f) == "arm_timer 5000, get_address");
  f.on_address({}, named("localhost", 6380));
  drain(f);
  f.on_resolved({}, {numeric("127.0.0.1", 1), numeric("127.0.0.2", 1)});
  drain(f);
  f.on_connected(refused);
  drain(f);
  const std::error_code unreachable(ENETUNREACH, std::system_category());
  f.on_connected(unreachable);
  const failure fail = take_failure(f);
  CHECK(fail.disconnect.error == unreachable);  // the last refusal
  CHECK(fail.disconnect.sent_error == errc::outcome_unknown);
  CHECK_FALSE(fail.disconnect.was_ready);
}

TEST_CASE("login failures: wrong password and NOPERM are permanent, other errors are retried") {
  SUBCASE("wrong password") {
    const failure f = login_fails_with(settings("bad"), "WRONGPASS invalid username-password pair or user is disabled.");
    CHECK(f.disconnect.error == errc::auth_failed);
    CHECK(f.disconnect.unsent_error == errc::auth_failed);  // the queued requests hear it now
    CHECK(f.disconnect.sent_error == errc::outcome_unknown);
    CHECK_FALSE(f.disconnect.was_ready);
    CHECK(f.backoff_ms >= 25);
    CHECK(f.backoff_ms <= 50);
  }
  SUBCASE("no password where one is needed") {
    const failure f = login_fails_with(settings(), "NOAUTH HELLO must be called with the client already authenticated");
    CHECK(f.disconnect.error == errc::auth_failed);
    CHECK(f.disconnect.unsent_error == errc::auth_failed);
  }
  SUBCASE("a password where none is configured") {
    const failure f = login_fails_with(settings("pw"), "ERR AUTH <password> called without any password configured for the default user");
    CHECK(f.disconnect.error == errc::auth_failed);
  }
  SUBCASE("NOPERM") {
    const failure f = login_fails_with(settings("pw", 0, "locker"), "NOPERM User locker has no permissions to run the 'hello' command");
    CHECK(f.disconnect.error == errc::permission_denied);
    CHECK(f.disconnect.unsent_error == errc::permission_denied);
  }
  SUBCASE("any other error: a server error, retried; the queued requests keep waiting") {
    const failure f = login_fails_with(settings(), "ERR something odd");
    CHECK(f.disconnect.error == errc::server_error);
    CHECK_FALSE(f.disconnect.unsent_error);
    CHECK(f.backoff_ms >= 25);
  }
  SUBCASE("SELECT refused: a configuration error, permanent") {
    fsm f(settings("", 99), 42);
    up_to_login(f);
    f.on_login_ok(0);
    f.on_login_error(1, "ERR DB index is out of range");
    const failure fail = take_failure(f);
    CHECK(fail.disconnect.error == errc::invalid_config);
    CHECK(fail.disconnect.unsent_error == errc::invalid_config);
  }
}

TEST_CASE("attempts go on after a permanent login failure, for a server being reconfigured") {
  fsm f(settings("bad"), 42);
  up_to_login(f);
  f.on_login_error(0, "WRONGPASS invalid username-password pair");
  take_failure(f);
  CHECK(f.last_error() == errc::auth_failed);
  CHECK(f.expired_unsent_error() == errc::auth_failed);
  f.on_timer();
  CHECK(next_actions(f) == "arm_timer 5000, get_address");
}

TEST_CASE("a server without HELLO: at once a new connection that logs in the RESP2 way") {
  for (const char* reply : {"ERR unknown command 'HELLO', with args beginning with: '3'", "NOPROTO unsupported protocol version"}) {
    INFO(reply);
    fsm f(settings("pw", 2), 42);
    up_to_login(f);
    f.on_login_error(0, reply);
    const failure fail = take_failure(f);
    CHECK(fail.disconnect.error == errc::protocol_error);
    CHECK(fail.disconnect.resp2_fallback);  // no failure: the connection says so, its owner hears nothing
    CHECK_FALSE(fail.disconnect.unsent_error);  // the requests wait for the RESP2 connection
    CHECK(fail.backoff_ms == 0);
    f.on_timer();
    drain(f);
    f.on_address({}, numeric("127.0.0.1", 6379));
    drain(f);
    f.on_connected({});
    CHECK(next_actions(f) == "log_in");
    CHECK(login_bytes(f) == cmd("AUTH", "pw") + cmd("CLIENT", "SETNAME", "deadbolt") + cmd("SELECT", 2));
    f.on_login_ok(0);
    f.on_login_error(1, "ERR unknown subcommand 'SETNAME'");  // a name is a courtesy
    CHECK(next_actions(f).empty());
    f.on_login_ok(2);
    CHECK(next_actions(f) == "cancel_timer, ready");
    CHECK(f.protocol() == 2);

    // It stays RESP2, and a later failure backs off as usual.
    f.on_failure(refused);
    const failure later = take_failure(f);
    CHECK(later.backoff_ms >= 25);
    CHECK_FALSE(later.disconnect.resp2_fallback);
  }
  SUBCASE("the RESP2 login without a password, and its AUTH failing") {
    fsm f(settings("bad", 0, "locker"), 42);
    up_to_login(f);
    f.on_login_error(0, "ERR unknown command 'HELLO'");
    take_failure(f);
    f.on_timer();
    drain(f);
    f.on_address({}, numeric("127.0.0.1", 6379));
    drain(f);
    f.on_connected({});
    drain(f);
    CHECK(login_bytes(f) == cmd("AUTH", "locker", "bad") + cmd("CLIENT", "SETNAME", "deadbolt"));
    f.on_login_error(0, "WRONGPASS invalid username-password pair");
    CHECK(take_failure(f).disconnect.error == errc::auth_failed);
  }
}

TEST_CASE("connection refused: backoff doubles up to the maximum, with jitter, and resets once ready") {
  fsm f(settings(), 7);
  f.start();
  std::int64_t ceiling = 50;
  for (int attempt = 0; attempt < 8; ++attempt) {
    INFO("attempt " << attempt);
    CHECK(next_actions(f) == "arm_timer 5000, get_address");
    f.on_address({}, numeric("127.0.0.1", 6379));
    CHECK(next_actions(f) == "connect 127.0.0.1:6379");
    f.on_connected(refused);
    const failure fail = take_failure(f);
    CHECK(fail.disconnect.error == refused);
    CHECK_FALSE(fail.disconnect.unsent_error);  // a refusal is transient: requests wait their deadline
    CHECK(fail.backoff_ms >= ceiling / 2);
    CHECK(fail.backoff_ms <= ceiling);
    CHECK(f.expired_unsent_error() == refused);
    ceiling = std::min<std::int64_t>(ceiling * 2, 2000);
    f.on_timer();  // the backoff is over: the next attempt
  }
  f.on_address({}, numeric("127.0.0.1", 6379));
  drain(f);
  f.on_connected({});
  drain(f);
  f.on_login_ok(0);
  CHECK(next_actions(f) == "cancel_timer, ready");
  f.on_failure(refused);
  const failure after_ready = take_failure(f);
  CHECK(after_ready.disconnect.was_ready);
  CHECK(after_ready.backoff_ms <= 50);
}

TEST_CASE("the jitter spreads clients: different seeds, different delays") {
  std::vector<std::int64_t> delays;
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    fsm f(settings(), seed * 0x9e3779b97f4a7c15ull);
    f.start();
    drain(f);
    f.on_address({}, numeric("127.0.0.1", 6379));
    drain(f);
    f.on_connected(refused);
    delays.push_back(take_failure(f).backoff_ms);
  }
  std::sort(delays.begin(), delays.end());
  CHECK(std::unique(delays.begin(), delays.end()) - delays.begin() > 1);
}

TEST_CASE("the connect timeout covers every step up to the end of the login") {
  constexpr auto timed_out = std::errc::timed_out;  // the system error (as Asio reports it) matches it
  SUBCASE("waiting for the address source") {
    fsm f(settings(), 1);
    f.start();
    drain(f);
    f.on_timer();
    CHECK(take_failure(f).disconnect.error == timed_out);
    f.on_address({}, numeric("127.0.0.1", 6379));  // too late: ignored
    CHECK(next_actions(f).empty());
  }
  SUBCASE("resolving") {
    fsm f(settings(), 1);
    f.start();
    drain(f);
    f.on_address({}, named("localhost", 6379));
    drain(f);
    f.on_timer();
    CHECK(take_failure(f).disconnect.error == timed_out);
  }
  SUBCASE("connecting") {
    fsm f(settings(), 1);
    f.start();
    drain(f);
    f.on_address({}, numeric("127.0.0.1", 6379));
    drain(f);
    f.on_timer();
    CHECK(take_failure(f).disconnect.error == timed_out);
    f.on_connected({});  // a completion from before the timeout: ignored
    CHECK(next_actions(f).empty());
  }
  SUBCASE("logging in: the server never answers HELLO") {
    fsm f(settings(), 1);
    up_to_login(f);
    f.on_timer();
    const failure fail = take_failure(f);
    CHECK(fail.disconnect.error == timed_out);
    CHECK(fail.disconnect.sent_error == errc::outcome_unknown);
    CHECK_FALSE(fail.disconnect.unsent_error);
    CHECK(f.expired_unsent_error() == timed_out);
    f.on_login_ok(0);  // a late answer: ignored
    CHECK(next_actions(f).empty());
    CHECK_FALSE(f.ready());
  }
  SUBCASE("once ready the timer means nothing") {
    fsm f(settings(), 1);
    up_to_login(f);
    f.on_login_ok(0);
    drain(f);
    f.on_timer();
    CHECK(next_actions(f).empty());
    CHECK(f.ready());
  }
}

TEST_CASE("failures of a ready connection: what the sent requests are told") {
  auto ready_session = [] {
    auto f = std::make_unique<fsm>(settings(), 1);
    up_to_login(*f);
    f->on_login_ok(0);
    drain(*f);
    return f;
  };
  SUBCASE("a sent request timed out: timed_out") {
    auto f = ready_session();
    f->on_failure(errc::timed_out);
    const failure fail = take_failure(*f);
    CHECK(fail.disconnect.was_ready);
    CHECK(fail.disconnect.sent_error == errc::timed_out);
  }
  SUBCASE("a malformed reply: the decoder's error") {
    auto f = ready_session();
    const std::error_code bad = resp::error::reply_limit_exceeded;
    f->on_failure(bad);
    CHECK(take_failure(*f).disconnect.sent_error == bad);
  }
  SUBCASE("the stream broke: outcome_unknown") {
    auto f = ready_session();
    f->on_failure(std::error_code(ECONNRESET, std::system_category()));
    CHECK(take_failure(*f).disconnect.sent_error == errc::outcome_unknown);
    f->on_failure(refused);  // nothing left to lose
    CHECK(next_actions(*f).empty());
  }
}

TEST_CASE("a stream with a handshake step (the seam for TLS)") {
  detail::session_settings s = settings();
  s.handshake = true;
  fsm f(s, 1);
  f.start();
  drain(f);
  f.on_address({}, numeric("127.0.0.1", 6379));
  drain(f);
  f.on_connected({});
  CHECK(next_actions(f) == "handshake");
  CHECK_FALSE(f.carries_bytes());
  const std::error_code bad(EPROTO, std::system_category());
  f.on_handshake(bad);
  CHECK(take_failure(f).disconnect.error == bad);
  f.on_timer();
  drain(f);
  f.on_address({}, numeric("127.0.0.1", 6379));
  drain(f);
  f.on_connected({});
  drain(f);
  f.on_handshake({});
  CHECK(next_actions(f) == "log_in");
}

TEST_CASE("TLS: a refused certificate fails the queued requests at once; a broken or slow handshake does not") {
  detail::session_settings s = settings();
  s.handshake = true;
  fsm f(s, 1);
  auto to_handshake = [&f] {
    f.on_timer();
    drain(f);
    f.on_address({}, named("localhost", 6379));
    drain(f);  // resolve
    f.on_resolved({}, {numeric("127.0.0.1", 6379)});
    drain(f);
    f.on_connected({});
    const auto actions = drain(f);
    REQUIRE(actions.size() == 1);
    CHECK(actions[0].where->host == "localhost");  // the name the certificate must carry
  };
  f.start();
  drain(f);
  f.on_address({}, numeric("127.0.0.1", 6379));
  drain(f);
  f.on_connected({});
  drain(f);
  const std::error_code expired(10, deadbolt::tls_verify_category());  // X509_V_ERR_CERT_HAS_EXPIRED
  f.on_handshake(expired);
  CHECK(take_failure(f).disconnect.unsent_error == expired);
  to_handshake();
  const std::error_code reset(ECONNRESET, std::system_category());
  f.on_handshake(reset);
  CHECK_FALSE(take_failure(f).disconnect.unsent_error);
  to_handshake();
  f.on_timer();  // the connect timeout, during the handshake
  CHECK(take_failure(f).disconnect.error == errc::tls_handshake_timed_out);
  to_handshake();
  f.on_handshake({});
  drain(f);
  f.on_failure(expired);  // TLS 1.3: the server's verdict on our certificate comes during the login
  CHECK(take_failure(f).disconnect.unsent_error == expired);
}

TEST_CASE("stop: no more actions, whatever comes after") {
  fsm f(settings(), 1);
  up_to_login(f);
  f.on_login_error(0, "WRONGPASS nope");  // queues a disconnect and a backoff...
  f.stop();                                // ...which stop() drops: the driver closes everything itself
  CHECK(next_actions(f).empty());
  CHECK(f.stopped());
  f.on_timer();
  f.on_failure(refused);
  f.start();
  CHECK(next_actions(f).empty());
}

namespace {

// Carries out the machine's actions the way the connection does, with a real address source and a
// scripted network: every connect to an address in `down` is refused.
struct scripted_driver : detail::address_sink {
  explicit scripted_driver(detail::address_source& source) : source(source), session(settings(), 3) {}

  void on_address(std::error_code ec, const detail::server_address& where) override { session.on_address(ec, where); }

  void run() {
    for (auto a = session.next(); a.what != act::none; a = session.next()) {
      switch (a.what) {
        case act::get_address: ++asked; source.next(*this); break;
        case act::connect: {
          const std::string to = a.where->host + ":" + std::to_string(a.where->port);
          connects.push_back(to);
          session.on_connected(to == down ? refused : std::error_code());
          break;
        }
        case act::log_in: session.on_login_ok(0); break;
        case act::arm_timer: timer_armed = true; break;
        default: break;
      }
    }
  }
  void timer_fires() {
    REQUIRE(timer_armed);
    timer_armed = false;
    session.on_timer();
    run();
  }

  detail::address_source& source;
  fsm session;
  std::string down;
  int asked = 0;
  bool timer_armed = false;
  std::vector<std::string> connects;
};

}  // namespace

TEST_CASE("the address source is asked before every attempt, and a static list is taken in turn") {
  detail::static_addresses source({numeric("127.0.0.1", 7001), numeric("127.0.0.1", 7002)});
  scripted_driver d(source);
  d.down = "127.0.0.1:7001";
  d.session.start();
  d.run();
  CHECK(d.asked == 1);
  CHECK(d.session.current() == fsm::state::backing_off);  // 7001 refused
  d.timer_fires();
  CHECK(d.asked == 2);
  CHECK(d.session.ready());  // 7002 took it
  d.session.on_failure(refused);  // that connection drops
  d.run();
  d.timer_fires();
  CHECK(d.asked == 3);
  d.down.clear();
  d.timer_fires();
  CHECK(d.asked == 4);
  CHECK(d.session.ready());
  CHECK(d.connects == std::vector<std::string>{"127.0.0.1:7001", "127.0.0.1:7002", "127.0.0.1:7001", "127.0.0.1:7002"});
}

TEST_CASE("an empty static list is a configuration error, not a crash") {
  detail::static_addresses source({});
  scripted_driver d(source);
  d.session.start();
  d.run();
  CHECK(d.session.current() == fsm::state::backing_off);
  CHECK(d.session.last_error() == errc::invalid_config);
  CHECK(d.connects.empty());
}

TEST_CASE("an address from Sentinel is confirmed with ROLE: a replica is a failed attempt (not_master), retried") {
  detail::session_settings s = settings();
  s.login.require_master = true;
  fsm f(s, 1);
  up_to_login(f);
  CHECK(login_bytes(f) == cmd("HELLO", 3, "SETNAME", "deadbolt") + cmd("ROLE"));
  f.on_login_ok(0);
  f.on_login_error(1, "slave");  // what the connection reports when ROLE's first element is not "master"
  const failure fail = take_failure(f);
  CHECK(fail.disconnect.error == errc::not_master);
  CHECK_FALSE(fail.disconnect.unsent_error);  // not permanent: the sentinels are asked again
  CHECK(f.expired_unsent_error() == errc::not_master);
  CHECK(detail::is_master_role("master"));
  CHECK_FALSE(detail::is_master_role("slave"));
}

TEST_CASE("a server that moved (Sentinel's +switch-master): connect again at once, even during a backoff") {
  SUBCASE("a ready connection is left with the reason, and the next attempt starts without a backoff") {
    fsm f(settings(), 3);
    up_to_login(f);
    f.on_login_ok(0);
    REQUIRE(next_actions(f) == "cancel_timer, ready");
    f.on_moved(errc::not_master);
    const failure moved = take_failure(f);
    CHECK(moved.disconnect.error == errc::not_master);
    CHECK(moved.disconnect.was_ready);
    CHECK(moved.backoff_ms == 0);
  }
  SUBCASE("a backoff in progress ends now: the address is asked again") {
    fsm f(settings(), 3);
    f.start();
    for (int attempt = 0; attempt < 4; ++attempt) {  // a long backoff, as after a dead master
      drain(f);
      f.on_address({}, numeric("127.0.0.1", 6379));
      drain(f);
      f.on_connected(refused);
      REQUIRE(take_failure(f).backoff_ms > 0);
      if (attempt < 3) f.on_timer();
    }
    f.on_moved(errc::not_master);
    CHECK(next_actions(f) == "arm_timer 5000, get_address");
    CHECK(f.current() == fsm::state::finding_address);
  }
  SUBCASE("an attempt under way is abandoned for a fresh one") {
    fsm f(settings(), 3);
    f.start();
    drain(f);
    f.on_address({}, numeric("127.0.0.1", 6379));
    REQUIRE(next_actions(f) == "connect 127.0.0.1:6379");
    f.on_moved(errc::not_master);
    CHECK(take_failure(f).backoff_ms == 0);
  }
  SUBCASE("nothing to leave: idle and stopped stay as they are") {
    fsm f(settings(), 3);
    f.on_moved(errc::not_master);
    CHECK(next_actions(f).empty());
    CHECK(f.current() == fsm::state::idle);
  }
}
