// The client against a scripted fake server that misbehaves: malformed replies, replies of the wrong
// shape, error replies, dropped connections, silence. Every operation must end with a clear error
// code (never a crash or a hang), and the client must keep working afterwards on a new connection.
#include <doctest/doctest.h>

#include <atomic>
#include <charconv>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/resp/error.hpp"
#include "support/sync.hpp"

using namespace std::chrono_literals;
using deadbolt::errc;
using deadbolt::test::call;
namespace rerr = deadbolt::resp;

namespace {

// ---- the fake server -------------------------------------------------------------------------------

/// One command the client sent: its arguments, the first upper-cased.
struct command {
  int connection = 0;  ///< 1 for the first connection the server accepted, 2 for the next...
  std::vector<std::string> args;

  bool is(std::string_view verb) const { return !args.empty() && args[0] == verb; }
  /// EVALSHA / EVAL of a script with `keys` keys (acquire: 1, force unlock: 2, unlock: 3).
  bool script(int keys) const {
    return (is("EVALSHA") || is("EVAL")) && args.size() > 2 && args[2] == std::to_string(keys);
  }
  std::string arg(std::size_t i) const { return i < args.size() ? args[i] : std::string(); }
};

/// What the server does about one command.
struct answer {
  enum class then { keep_open, close } after = then::keep_open;
  bool silent = false;  ///< write nothing (the connection stays open unless `after` says close)
  std::string bytes;
};
answer reply(std::string bytes) { return {answer::then::keep_open, false, std::move(bytes)}; }
answer reply_and_close(std::string bytes) { return {answer::then::close, false, std::move(bytes)}; }
answer silence() { return {answer::then::keep_open, true, {}}; }
answer hang_up() { return {answer::then::close, true, {}}; }

/// A well-behaved Redis for the commands the client sends.
answer normal(const command& c) {
  if (c.is("HELLO")) return reply("%1\r\n+server\r\n+fake\r\n");
  if (c.is("CLIENT") || c.is("SELECT") || c.is("AUTH")) return reply("+OK\r\n");
  if (c.is("PING")) return reply("+PONG\r\n");
  if (c.is("ROLE")) return reply("*3\r\n$6\r\nmaster\r\n:0\r\n*0\r\n");  // a master without replicas
  if (c.script(1)) return reply("*1\r\n:1\r\n");  // acquire: {new hold count} = acquired
  if (c.script(3)) return reply(":1\r\n");  // unlock: fully released
  if (c.script(2)) return reply(":1\r\n");  // force unlock: deleted
  if (c.is("HGET")) return reply("_\r\n");
  if (c.is("EXISTS")) return reply(":1\r\n");
  if (c.is("DEL")) return reply(":1\r\n");
  return reply("-ERR unknown command '" + c.arg(0) + "'\r\n");
}

using responder = std::function<answer(const command&)>;

// Parses one client command (an array of bulk strings) from the front of `in`; 0 if incomplete.
std::size_t parse_command(std::string_view in, std::vector<std::string>& args) {
  args.clear();
  std::size_t pos = 0;
  auto line = [&](char type, std::size_t& value) {
    if (pos >= in.size()) return false;
    const auto end = in.find("\r\n", pos);
    if (end == std::string_view::npos) return false;
    const char* first = in.data() + pos + 1;
    const char* last = in.data() + end;
    const auto r = std::from_chars(first, last, value);
    if (in[pos] != type || r.ec != std::errc() || r.ptr != last) {
      FAIL_CHECK("the client sent something that is not a command: " << in.substr(pos, 40));
      return false;
    }
    pos = end + 2;
    return true;
  };
  std::size_t count = 0;
  if (!line('*', count)) return 0;
  for (std::size_t i = 0; i < count; ++i) {
    std::size_t len = 0;
    if (!line('$', len)) return 0;
    if (in.size() < pos + len + 2) return 0;
    args.emplace_back(in.substr(pos, len));
    pos += len + 2;
  }
  if (!args.empty()) {
    for (char& ch : args.front()) ch = static_cast<char>(ch >= 'a' && ch <= 'z' ? ch - 'a' + 'A' : ch);
  }
  return pos;
}

/// A TCP server on 127.0.0.1 (port chosen by the system) that runs on the test's io_context and
/// answers each command through `respond` (commands it has no special answer for: return normal(c)).
class fake_server {
 public:
  fake_server(asio::any_io_executor ex, responder respond) : state_(std::make_shared<state>(ex, std::move(respond))) {
    std::error_code ec;
    const asio::ip::tcp::endpoint where(asio::ip::make_address("127.0.0.1", ec), 0);
    state_->acceptor.open(where.protocol(), ec);
    REQUIRE_FALSE(ec);
    state_->acceptor.bind(where, ec);
    REQUIRE_FALSE(ec);
    state_->acceptor.listen(asio::socket_base::max_listen_connections, ec);
    REQUIRE_FALSE(ec);
    port_ = state_->acceptor.local_endpoint(ec).port();
    asio::post(ex, [s = state_] { accept(s); });
  }
  ~fake_server() {
    std::promise<void> closed;
    asio::post(state_->executor, [s = state_, &closed] {
      s->stopped = true;
      std::error_code ignored;
      s->acceptor.close(ignored);
      for (auto& weak : s->sessions) {
        if (auto session = weak.lock()) session->socket.close(ignored);
      }
      closed.set_value();
    });
    closed.get_future().wait();
  }
  fake_server(const fake_server&) = delete;
  fake_server& operator=(const fake_server&) = delete;

  std::string url() const { return "redis://127.0.0.1:" + std::to_string(port_); }
  int connections() const { return state_->accepted.load(); }
  /// Every command received so far, in order.
  std::vector<command> commands() const {
    std::lock_guard<std::mutex> lock(state_->mutex);
    return state_->log;
  }
  /// The commands with verb `verb`.
  std::vector<command> commands(std::string_view verb) const {
    std::vector<command> out;
    for (auto& c : commands()) {
      if (c.is(verb)) out.push_back(c);
    }
    return out;
  }

 private:
  struct session {
    explicit session(asio::ip::tcp::socket s, int n) : socket(std::move(s)), number(n) {}
    asio::ip::tcp::socket socket;
    int number;
    std::string input;
    std::string output;
    char chunk[16384];
  };
  struct state {
    state(asio::any_io_executor ex, responder r) : executor(ex), acceptor(ex), respond(std::move(r)) {}
    asio::any_io_executor executor;
    asio::ip::tcp::acceptor acceptor;
    responder respond;
    bool stopped = false;
    std::atomic<int> accepted{0};
    std::vector<std::weak_ptr<session>> sessions;
    mutable std::mutex mutex;
    std::vector<command> log;
  };

  static void accept(const std::shared_ptr<state>& s) {
    s->acceptor.async_accept([s](std::error_code ec, asio::ip::tcp::socket socket) {
      if (ec || s->stopped) return;
      auto conn = std::make_shared<session>(std::move(socket), ++s->accepted);
      s->sessions.push_back(conn);
      read(s, conn);
      accept(s);
    });
  }

  static void read(const std::shared_ptr<state>& s, const std::shared_ptr<session>& conn) {
    conn->socket.async_read_some(asio::buffer(conn->chunk), [s, conn](std::error_code ec, std::size_t n) {
      if (ec || s->stopped) return;
      conn->input.append(conn->chunk, n);
      conn->output.clear();
      bool close = false;
      std::vector<std::string> args;
      while (!close) {
        const std::size_t used = parse_command(conn->input, args);
        if (used == 0) break;
        conn->input.erase(0, used);
        command c{conn->number, args};
        {
          std::lock_guard<std::mutex> lock(s->mutex);
          s->log.push_back(c);
        }
        const answer a = s->respond(c);
        if (!a.silent) conn->output += a.bytes;
        close = a.after == answer::then::close;
      }
      if (conn->output.empty()) {
        if (close) return shut(conn);
        return read(s, conn);
      }
      asio::async_write(conn->socket, asio::buffer(conn->output), [s, conn, close](std::error_code ec, std::size_t) {
        if (ec || s->stopped) return;
        if (close) return shut(conn);
        read(s, conn);
      });
    });
  }

  static void shut(const std::shared_ptr<session>& conn) {
    std::error_code ignored;
    conn->socket.shutdown(asio::socket_base::shutdown_both, ignored);
    conn->socket.close(ignored);
  }

  std::shared_ptr<state> state_;
  std::uint16_t port_ = 0;
};

// ---- the client ---------------------------------------------------------------------------------------

deadbolt::config config_for(const fake_server& server) {
  deadbolt::config cfg;
  cfg.url = server.url();
  cfg.command_timeout = 300ms;
  cfg.connect_timeout = 1000ms;
  cfg.reconnect_min = 5ms;
  cfg.reconnect_max = 50ms;
  return cfg;
}

constexpr auto limit = std::chrono::seconds(10);  // far beyond any expected completion: a hang

deadbolt::test::outcome<bool> try_lock(deadbolt::reentrant_lock& lock, deadbolt::owner_id owner = 1) {
  return call<bool>([&](auto cb) { lock.async_try_lock(owner, cb); }, limit);
}
deadbolt::test::outcome<bool> is_locked(deadbolt::reentrant_lock& lock) {
  return call<bool>([&](auto cb) { lock.async_is_locked(cb); }, limit);
}

/// A reply the decoder must refuse, and the error it reports.
struct malformed {
  const char* what;
  std::string bytes;
  rerr::error expected;
};

std::vector<malformed> malformed_replies() {
  std::string deep;
  for (int i = 0; i < 20; ++i) deep += "*1\r\n";
  deep += ":1\r\n";
  std::string huge = "*4000\r\n";
  const std::string element = "$300\r\n" + std::string(300, 'x') + "\r\n";
  for (int i = 0; i < 4000; ++i) huge += element;
  return {
      {"garbage type byte", "?garbage\r\n", rerr::error::invalid_type_byte},
      {"binary garbage", std::string("\x00\x01\x02\xff\r\n", 6), rerr::error::invalid_type_byte},
      {"bad bulk length", "$abc\r\n", rerr::error::invalid_length},
      {"negative bulk length", "$-5\r\n", rerr::error::invalid_length},
      {"absurd bulk length", "$999999999999\r\n", rerr::error::bulk_limit_exceeded},
      {"absurd element count", "*999999999999\r\n", rerr::error::element_limit_exceeded},
      {"too-deep nesting", deep, rerr::error::depth_limit_exceeded},
      {"endless line without CRLF", "+" + std::string(70000, 'a'), rerr::error::bulk_limit_exceeded},
      {"endless number without CRLF", ":" + std::string(200, '7'), rerr::error::invalid_length},
      {"bulk payload without CRLF", "$3\r\nabcde\r\n", rerr::error::missing_crlf},
      {"integer overflow", ":99999999999999999999999\r\n", rerr::error::invalid_integer},
      {"bad boolean", "#x\r\n", rerr::error::invalid_boolean},
      {"null with data", "_x\r\n", rerr::error::invalid_null},
      {"streamed string", "$?\r\n;3\r\nabc\r\n;0\r\n", rerr::error::unsupported_streamed},
      {"a reply over max_reply_size", huge, rerr::error::reply_limit_exceeded},
  };
}

}  // namespace

TEST_CASE("a malformed reply fails the request with the decoder's error; the next request reconnects") {
  for (const malformed& m : malformed_replies()) {
    INFO("reply: " << m.what);
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("EXISTS") && c.connection == 1) return reply(m.bytes);
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("hostile");

    const auto first = is_locked(lock);
    CHECK(first.ec == m.expected);
    CHECK(&first.ec.category() == &rerr::resp_category());

    const auto second = is_locked(lock);
    CHECK_FALSE(second.ec);
    CHECK(second.value);
    CHECK(server.connections() == 2);
  }
}

TEST_CASE("a malformed reply to an acquire: the client asks for its hold count instead of re-running it") {
  SUBCASE("the check is malformed too: outcome_unknown") {
    for (const malformed& m : malformed_replies()) {
      INFO("reply: " << m.what);
      deadbolt::test::io_thread io;
      fake_server server(io.executor(), [&](const command& c) {
        if ((c.script(1) || c.is("HGET")) && c.connection <= 2) return reply(m.bytes);
        return normal(c);
      });
      deadbolt::client client(io.executor(), config_for(server));
      auto lock = client.lock("hostile");

      const auto r = try_lock(lock);
      CHECK(r.ec == errc::outcome_unknown);
      CHECK_FALSE(r.value);
      // Never re-run blindly: one acquire, then one HGET of our own field on the next connection.
      const auto hget = server.commands("HGET");
      REQUIRE(hget.size() == 1);
      CHECK(hget[0].connection == 2);
      CHECK(hget[0].arg(1) == "hostile");
      CHECK(hget[0].arg(2) == client.id() + ":1");

      const auto again = try_lock(lock);
      CHECK_FALSE(again.ec);
      CHECK(again.value);
      CHECK(server.connections() == 3);
      int acquires = 0;
      for (const auto& c : server.commands()) acquires += c.script(1) ? 1 : 0;
      CHECK(acquires == 2);
    }
  }
  SUBCASE("the check finds the hold: acquired") {
    for (const malformed& m : malformed_replies()) {
      INFO("reply: " << m.what);
      deadbolt::test::io_thread io;
      fake_server server(io.executor(), [&](const command& c) {
        if (c.script(1) && c.connection == 1) return reply(m.bytes);
        if (c.is("HGET")) return reply("$1\r\n1\r\n");
        return normal(c);
      });
      deadbolt::client client(io.executor(), config_for(server));
      auto lock = client.lock("hostile");

      const auto r = try_lock(lock);
      CHECK_FALSE(r.ec);
      CHECK(r.value);
      CHECK(server.connections() == 2);
    }
  }
  SUBCASE("the check finds no hold: not acquired, no error") {
    for (const malformed& m : malformed_replies()) {
      INFO("reply: " << m.what);
      deadbolt::test::io_thread io;
      fake_server server(io.executor(), [&](const command& c) {
        if (c.script(1) && c.connection == 1) return reply(m.bytes);
        return normal(c);  // HGET: nil
      });
      deadbolt::client client(io.executor(), config_for(server));
      auto lock = client.lock("hostile");

      const auto r = try_lock(lock);
      CHECK_FALSE(r.ec);
      CHECK_FALSE(r.value);
      CHECK(server.connections() == 2);
    }
  }
}

TEST_CASE("a reply of an unexpected shape is errc::protocol_error and the connection stays usable") {
  struct shape {
    const char* what;
    std::string bytes;
  };
  const shape shapes[] = {
      {"a map", "%1\r\n+key\r\n:1\r\n"},
      {"an array", "*2\r\n:1\r\n:2\r\n"},
      {"nested arrays", "*1\r\n*1\r\n*0\r\n"},
      {"an empty array", "*0\r\n"},
      {"a set", "~1\r\n:1\r\n"},
      {"a status line", "+OK\r\n"},
      {"a non-numeric bulk string", "$3\r\nabc\r\n"},
      {"a double", ",1.5\r\n"},
      {"a big number", "(123456789012345678901234567890\r\n"},
      {"a verbatim string", "=7\r\ntxt:abc\r\n"},
  };
  for (const shape& s : shapes) {
    INFO("reply: " << s.what);
    deadbolt::test::io_thread io;
    int acquires = 0;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1) && ++acquires == 1) return reply(s.bytes);
      if (c.is("EXISTS") && c.connection == 1 && acquires == 1) return reply(s.bytes);
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("shape");

    const auto acquire = try_lock(lock);
    CHECK(acquire.ec == errc::protocol_error);
    CHECK_FALSE(acquire.value);
    const auto query = is_locked(lock);
    CHECK(query.ec == errc::protocol_error);

    const auto again = try_lock(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
    CHECK(server.connections() == 1);  // a well-formed reply keeps the stream in step
    CHECK(server.commands("HGET").empty());  // the acquire's outcome was not in doubt
  }
}

TEST_CASE("a check reply of an unexpected shape leaves the acquire's outcome unknown") {
  deadbolt::test::io_thread io;
  fake_server server(io.executor(), [&](const command& c) {
    if (c.script(1) && c.connection == 1) return reply_and_close("$5\r\nab");
    if (c.is("HGET")) return reply("*1\r\n:1\r\n");
    return normal(c);
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("shape");
  const auto r = try_lock(lock);
  CHECK(r.ec == errc::outcome_unknown);
  CHECK_FALSE(r.value);
}

TEST_CASE("error replies map to error codes; the connection stays usable") {
  struct error_reply {
    std::string bytes;
    errc expected;
  };
  const error_reply errors[] = {
      {"-ERR something broke\r\n", errc::server_error},
      {"-BUSY Redis is busy running a script\r\n", errc::server_busy},  // a single attempt reports it
      {"-LOADING Redis is loading the dataset in memory\r\n", errc::server_busy},
      {"-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", errc::wrong_type},
      {"-NOPERM this user has no permissions to run the 'evalsha' command\r\n", errc::permission_denied},
      {"-NOAUTH Authentication required.\r\n", errc::auth_failed},
      {"!21\r\nSYNTAX invalid syntax\r\n", errc::server_error},
      {"!9\r\nWRONGTYPE\r\n", errc::wrong_type},
      {"-\r\n", errc::server_error},
  };
  for (const error_reply& e : errors) {
    INFO("reply: " << e.bytes);
    deadbolt::test::io_thread io;
    int acquires = 0;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1) && ++acquires == 1) return reply(e.bytes);
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("errors");

    const auto r = try_lock(lock);
    CHECK(r.ec == e.expected);
    CHECK_FALSE(r.value);
    const auto again = try_lock(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
    CHECK(server.connections() == 1);
  }
}

TEST_CASE("LOADING and BUSY replies: a waiter asks again within its wait, never re-running a script that ran") {
  deadbolt::test::io_thread io;
  int acquires = 0;
  fake_server server(io.executor(), [&](const command& c) {
    if (c.script(1) && ++acquires <= 2) return reply("-LOADING Redis is loading the dataset in memory\r\n");
    if (c.script(1) && acquires == 3) return reply("-BUSY Redis is busy running a script\r\n");
    return normal(c);
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("loading");
  const auto r = call<bool>([&](auto cb) { lock.async_try_lock(1, std::chrono::seconds(10), std::chrono::milliseconds(0), cb); }, limit);
  CHECK_FALSE(r.ec);
  CHECK(r.value);
  CHECK(acquires == 4);
  CHECK(server.commands("HGET").empty());  // refused, not ambiguous: nothing to check
  CHECK(server.connections() == 1);
}

TEST_CASE("a busy reply with a TTL too long for the clock parks until the deadline, it does not spin") {
  // ms -> ns of such a TTL overflowed (undefined behaviour): in practice a park of 0 and a tight loop
  // of attempts until the deadline.
  deadbolt::test::io_thread io;
  std::atomic<int> acquires{0};
  fake_server server(io.executor(), [&](const command& c) {
    if (c.script(1)) {
      ++acquires;
      return reply(":9223372036854775807\r\n");
    }
    return normal(c);
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("endless-ttl");
  const auto r = call<bool>([&](auto cb) { lock.async_try_lock(1, std::chrono::milliseconds(300), std::chrono::milliseconds(0), cb); }, limit);
  CHECK_FALSE(r.ec);
  CHECK_FALSE(r.value);
  CHECK(acquires.load() >= 2);  // the first try, and one more when the wait ran out
  CHECK(acquires.load() <= 3);
}

TEST_CASE("NOSCRIPT: the acquire is resent as EVAL with the script body") {
  deadbolt::test::io_thread io;
  fake_server server(io.executor(), [&](const command& c) {
    if (c.is("EVALSHA")) return reply("-NOSCRIPT No matching script. Please use EVAL.\r\n");
    return normal(c);
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("noscript");

  const auto r = try_lock(lock);
  CHECK_FALSE(r.ec);
  CHECK(r.value);
  const auto cmds = server.commands();
  REQUIRE(cmds.size() == 4);
  CHECK(cmds[0].is("HELLO"));
  CHECK(cmds[1].is("ROLE"));  // replica sync (automatic): are there replicas to WAIT for?
  CHECK(cmds[2].is("EVALSHA"));
  CHECK(cmds[2].arg(1).size() == 40);
  CHECK(cmds[3].is("EVAL"));
  CHECK(cmds[3].arg(1).find("hincrby") != std::string::npos);
  CHECK(cmds[3].arg(3) == "noscript");
  CHECK(cmds[3].arg(5) == cmds[2].arg(5));  // the same owner field
}

TEST_CASE("the server closes the socket mid-reply") {
  SUBCASE("a query: outcome_unknown") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("EXISTS") && c.connection == 1) return reply_and_close("*3\r\n:1\r\n$10\r\nabc");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("midreply");
    CHECK(is_locked(lock).ec == errc::outcome_unknown);
    const auto again = is_locked(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
    CHECK(server.connections() == 2);
  }
  SUBCASE("an acquire whose check also dies: outcome_unknown") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1) && c.connection == 1) return reply_and_close("$10\r\nabc");
      if (c.is("HGET") && c.connection == 2) return hang_up();
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("midreply");
    const auto r = try_lock(lock);
    CHECK(r.ec == errc::outcome_unknown);
    CHECK_FALSE(r.value);
    const auto again = try_lock(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
    CHECK(server.connections() == 3);
  }
  SUBCASE("an acquire that did run: the check finds the hold, and unlock works") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1) && c.connection == 1) return reply_and_close("$10\r\nabc");
      if (c.is("HGET")) return reply("$1\r\n1\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("midreply");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    CHECK_FALSE(call([&](auto cb) { lock.async_unlock(1, cb); }, limit).ec);
  }
}

TEST_CASE("a server that never answers: timed_out, then outcome_unknown for an acquire") {
  SUBCASE("a query times out") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("EXISTS") && c.connection == 1) return silence();
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("silent");
    const auto started = std::chrono::steady_clock::now();
    CHECK(is_locked(lock).ec == errc::timed_out);
    const auto took = std::chrono::steady_clock::now() - started;
    CHECK(took >= 250ms);
    CHECK(took < 3s);
    const auto again = is_locked(lock);
    CHECK_FALSE(again.ec);
    CHECK(server.connections() == 2);  // a stuck connection is replaced
  }
  SUBCASE("an acquire whose check is never answered either") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if ((c.script(1) || c.is("HGET")) && c.connection <= 2) return silence();
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("silent");
    const auto started = std::chrono::steady_clock::now();
    const auto r = try_lock(lock);
    CHECK(r.ec == errc::outcome_unknown);
    CHECK(std::chrono::steady_clock::now() - started < 5s);
    const auto again = try_lock(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
  }
  SUBCASE("the handshake is never answered: not_connected") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if ((c.is("HELLO") || c.is("ROLE")) && c.connection == 1) return silence();  // replies come in order
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("silent");
    const auto r = try_lock(lock);
    CHECK(r.ec == errc::not_connected);
    CHECK(server.commands("EVALSHA").empty());  // never written before the login completed
    const auto again = try_lock(lock);
    CHECK_FALSE(again.ec);
    CHECK(again.value);
  }
}

TEST_CASE("hostile handshakes") {
  SUBCASE("a malformed HELLO reply: the request waits for the next connection") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("HELLO") && c.connection == 1) return reply("%1\r\n+server\r\n?\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("handshake");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    CHECK(server.connections() == 2);
  }
  SUBCASE("wrong password: auth_failed") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("HELLO")) return reply("-WRONGPASS invalid username-password pair or user is disabled.\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("handshake");
    CHECK(try_lock(lock).ec == errc::auth_failed);
    CHECK(server.commands("EVALSHA").empty());
  }
  SUBCASE("a server without HELLO: logs in the RESP2 way and works") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("HELLO")) return reply("-ERR unknown command 'HELLO', with args beginning with: '3'\r\n");
      if (c.script(1)) return reply("*1\r\n:1\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("handshake");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    const auto setname = server.commands("CLIENT");
    REQUIRE(setname.size() == 1);
    CHECK(setname[0].connection == 2);
    CHECK(setname[0].arg(1) == "SETNAME");
  }
  SUBCASE("the server accepts and hangs up at once") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("HELLO")) return hang_up();
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("handshake");
    const auto r = try_lock(lock);
    INFO("error: " << r.ec.message());
    CHECK((r.ec == errc::closed_during_login || r.ec == asio::error::eof || r.ec == asio::error::connection_reset ||
           r.ec == asio::error::broken_pipe || r.ec == errc::not_connected));
    CHECK(server.connections() >= 2);  // it kept trying
  }
}

TEST_CASE("replies nobody asked for") {
  SUBCASE("an extra reply after the last one: protocol error, the connection is replaced") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1) && c.connection == 1) return reply("*1\r\n:1\r\n+surprise\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("extra");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);  // its own reply came first
    CHECK(r.value);
    const auto q = is_locked(lock);
    CHECK_FALSE(q.ec);
    CHECK(q.value);
    CHECK(server.connections() == 2);
    const auto exists = server.commands("EXISTS");
    REQUIRE(exists.size() == 1);
    CHECK(exists[0].connection == 2);
  }
  SUBCASE("RESP3 pushes on the command connection are not taken for replies") {
    deadbolt::test::io_thread io;
    fake_server server(io.executor(), [&](const command& c) {
      if (c.script(1)) return reply(">2\r\n$10\r\ninvalidate\r\n*1\r\n$3\r\nkey\r\n>3\r\n+message\r\n+ch\r\n+0\r\n*1\r\n:1\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("pushes");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    const auto q = is_locked(lock);
    CHECK_FALSE(q.ec);
    CHECK(server.connections() == 1);
  }
}

TEST_CASE("unlock retries an ambiguous failure with the same request id") {
  deadbolt::test::io_thread io;
  fake_server server(io.executor(), [&](const command& c) {
    if (c.script(3) && c.connection == 1) return reply("?garbage\r\n");
    if (c.script(3) && c.connection == 2) return reply_and_close("$4\r\nab");
    return normal(c);  // third attempt: 1 (released)
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("retry");
  const auto r = call([&](auto cb) { lock.async_unlock(1, cb); }, limit);
  CHECK_FALSE(r.ec);

  std::vector<command> unlocks;
  for (const auto& c : server.commands()) {
    if (c.script(3)) unlocks.push_back(c);
  }
  REQUIRE(unlocks.size() == 3);
  CHECK(unlocks[0].connection == 1);
  CHECK(unlocks[1].connection == 2);
  CHECK(unlocks[2].connection == 3);
  const std::string latch = unlocks[0].arg(5);
  CHECK(latch.rfind("redisson_unlock_latch:{retry}:", 0) == 0);
  CHECK(latch.size() == std::string("redisson_unlock_latch:{retry}:").size() + 32);
  CHECK(unlocks[1].arg(5) == latch);
  CHECK(unlocks[2].arg(5) == latch);
}

TEST_CASE("unlock: three ambiguous failures in a row report the last error") {
  deadbolt::test::io_thread io;
  fake_server server(io.executor(), [&](const command& c) {
    if (c.script(3)) return reply("$abc\r\n");
    return normal(c);
  });
  deadbolt::client client(io.executor(), config_for(server));
  auto lock = client.lock("retry");
  CHECK(call([&](auto cb) { lock.async_unlock(1, cb); }, limit).ec == rerr::error::invalid_length);
  int attempts = 0;
  for (const auto& c : server.commands()) attempts += c.script(3) ? 1 : 0;
  CHECK(attempts == 3);
  // And the client still works.
  const auto r = try_lock(lock);
  CHECK_FALSE(r.ec);
  CHECK(r.value);
}

// ---- replica sync: what follows a script, and servers that refuse WAIT --------------------------------

namespace {

answer master_with_one_replica() {
  return reply("*3\r\n$6\r\nmaster\r\n:10\r\n*1\r\n*3\r\n$9\r\n127.0.0.1\r\n$4\r\n6380\r\n$2\r\n10\r\n");
}

std::vector<std::string> verbs(const std::vector<command>& cmds) {
  std::vector<std::string> out;
  for (const auto& c : cmds) out.push_back(c.script(3) ? "UNLOCK" : c.script(1) ? "ACQUIRE" : c.arg(0));
  return out;
}

}  // namespace

TEST_CASE("replica sync: WAIT 1 follows the acquire when ROLE lists a replica, never otherwise") {
  using V = std::vector<std::string>;
  deadbolt::test::io_thread io;
  SUBCASE("a replica acknowledges: acquired") {
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("ROLE")) return master_with_one_replica();
      if (c.is("WAIT")) return reply(":1\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("synced");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    // The ROLE after the WAIT (same write): the replicas the master still lists (replica_roster).
    CHECK(verbs(server.commands()) == V{"HELLO", "ROLE", "ACQUIRE", "WAIT", "ROLE"});
    const auto wait = server.commands("WAIT");
    REQUIRE(wait.size() == 1);
    CHECK(wait[0].arg(1) == "1");     // one acknowledging replica is all the check needs
    CHECK(wait[0].arg(2) == "1000");  // config::replica_sync_timeout
  }
  SUBCASE("no replica: no WAIT") {
    fake_server server(io.executor(), normal);
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("alone");
    CHECK(try_lock(lock).value);
    CHECK(verbs(server.commands()) == V{"HELLO", "ROLE", "ACQUIRE"});
  }
  SUBCASE("replica_sync off: no ROLE, no WAIT") {
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("ROLE")) return master_with_one_replica();
      return normal(c);
    });
    deadbolt::config cfg = config_for(server);
    cfg.replica_sync = deadbolt::replica_sync_mode::off;
    deadbolt::client client(io.executor(), cfg);
    auto lock = client.lock("unsynced");
    CHECK(try_lock(lock).value);
    CHECK(verbs(server.commands()) == V{"HELLO", "ACQUIRE"});
  }
  SUBCASE("WAIT refused (renamed away): the acquire stands and the connection stops asking") {
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("ROLE")) return master_with_one_replica();
      if (c.is("WAIT")) return reply("-ERR unknown command 'WAIT'\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("no-wait");
    const auto first = try_lock(lock);
    CHECK_FALSE(first.ec);
    CHECK(first.value);
    CHECK(try_lock(lock).value);  // a re-entry
    CHECK(verbs(server.commands()) == V{"HELLO", "ROLE", "ACQUIRE", "WAIT", "ROLE", "ACQUIRE"});
  }
  SUBCASE("ROLE refused by an ACL: logged in all the same, no WAIT") {
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("ROLE")) return reply("-NOPERM this user has no permissions to run the 'role' command\r\n");
      return normal(c);
    });
    deadbolt::client client(io.executor(), config_for(server));
    auto lock = client.lock("acl");
    const auto r = try_lock(lock);
    CHECK_FALSE(r.ec);
    CHECK(r.value);
    CHECK(verbs(server.commands()) == V{"HELLO", "ROLE", "ACQUIRE"});
  }
  SUBCASE("replica_sync on, and no replica ever acknowledges: undone and tried again, then replicas_not_synced") {
    fake_server server(io.executor(), [&](const command& c) {
      if (c.is("WAIT")) return reply(":0\r\n");
      return normal(c);
    });
    deadbolt::config cfg = config_for(server);
    cfg.replica_sync = deadbolt::replica_sync_mode::on;
    cfg.replica_sync_retries = 1;
    cfg.replica_sync_retry_delay = 10ms;
    deadbolt::client client(io.executor(), cfg);
    auto lock = client.lock("never-synced");
    const auto r = try_lock(lock);
    CHECK(r.ec == errc::replicas_not_synced);
    CHECK_FALSE(r.value);
    // The ROLE after each WAIT says the master has no replica (so none is asked ahead of the next
    // synced script). The undo needs no WAIT of its own.
    CHECK(verbs(server.commands()) ==
          V{"HELLO", "ROLE", "ACQUIRE", "WAIT", "ROLE", "UNLOCK", "ACQUIRE", "WAIT", "ROLE", "UNLOCK"});
    const auto cmds = server.commands();
    CHECK(cmds[5].arg(3) == "never-synced");  // the undo releases the lock the attempt took
  }
}
