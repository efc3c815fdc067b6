// The sans-I/O command pipeline, driven without sockets: what it writes, how it routes replies, and
// what happens on NOSCRIPT, on a dropped connection, on deadlines, on unsolicited replies and pushes.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/error.hpp"
#include "deadbolt/resp/read_buffer.hpp"
#include "pipeline/pipeline.hpp"
#include "pipeline/request.hpp"
#include "request_test_access.hpp"

#include "support/encoded_command.hpp"

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;
using deadbolt::errc;

namespace {

struct recorded {
  resp::type type;
  std::size_t depth;
  std::string value;
  bool end = false;  // push handler only: end_of_reply
};

using test_support::cmd;

// A command that records what the pipeline gives it. Plain ones encode "GET <name>"; script ones
// encode EVALSHA, or EVAL once the pipeline asked for the body.
class fake_request final : public detail::request {
 public:
  explicit fake_request(std::string name, bool script = false) : name_(std::move(name)), script_(script) {}

  std::string bytes() const {
    if (!script_) return cmd("GET", name_);
    return send_script_body() ? cmd("EVAL", "return 1", 1, name_) : cmd("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 1, name_);
  }
  // As begin_script: a script's encode says so (runs_script), every time it runs.
  void encode(resp::encoder& e) override {
    ++encodes;
    if (!script_) {
      e.command("GET", name_);
      return;
    }
    runs_script = true;
    if (send_script_body()) e.command("EVAL", "return 1", 1, name_);
    else e.command("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 1, name_);
  }
  void on_node(const resp::node& n) override { nodes.push_back({n.type, n.depth, std::string(n.value)}); }
  void on_done(std::error_code ec) override {
    ++done;
    error = ec;
    if (log) log->push_back(name_);
    if (hook) hook(ec);
  }

  std::vector<recorded> nodes;
  int done = 0;
  int encodes = 0;
  std::error_code error;
  std::vector<std::string>* log = nullptr;
  std::function<void(std::error_code)> hook;

 private:
  std::string name_;
  bool script_ = false;
};

class fake_push final : public detail::push_handler {
 public:
  void on_push_node(const resp::node& n, bool end_of_reply) override {
    nodes.push_back({n.type, n.depth, std::string(n.value), end_of_reply});
    if (end_of_reply) ++replies;
  }
  std::vector<recorded> nodes;
  int replies = 0;
};

// Feeds `bytes` through `in` the way the connection does, `piece` bytes per read.
std::error_code feed(detail::pipeline& p, resp::read_buffer& in, std::string_view bytes, std::size_t piece = 1 << 20) {
  while (!bytes.empty()) {
    std::size_t room = 0;
    char* space = in.prepare(room);
    REQUIRE(room > 0);
    const std::size_t n = std::min({room, piece, bytes.size()});
    std::memcpy(space, bytes.data(), n);
    in.commit(n);
    bytes.remove_prefix(n);
    if (auto ec = p.on_input(in)) return ec;
  }
  return {};
}

// Writes whatever the pipeline has (as the connection would) and returns it.
std::string write(detail::pipeline& p) {
  REQUIRE(p.can_write());
  std::string out = p.take_output();
  CHECK_FALSE(p.can_write());  // one write at a time
  p.write_done();
  return out;
}

constexpr std::int64_t far = 1'000'000'000'000;  // a deadline nobody reaches

}  // namespace

TEST_CASE("requests are coalesced into one write and replies are routed in order, in any split") {
  for (std::size_t piece : {std::size_t{1}, std::size_t{2}, std::size_t{3}, std::size_t{7}, std::size_t{1000}}) {
    INFO("piece " << piece);
    std::vector<std::string> log;
    fake_request a("a"), b("b"), c("c"), d("d");
    for (fake_request* r : {&a, &b, &c, &d}) r->log = &log;
    detail::pipeline p(resp::limits{});
    resp::read_buffer in(4096);

    p.submit(a, far);
    p.submit(b, far);
    p.submit(c, far);
    CHECK_FALSE(p.can_write());  // a new pipeline holds user requests until the handshake ends
    p.end_handshake();
    REQUIRE(p.can_write());
    const std::string first = p.take_output();
    CHECK(first == a.bytes() + b.bytes() + c.bytes());
    CHECK_FALSE(p.can_write());
    // Submitted while a write is in flight: waits for the next write.
    p.submit(d, far);
    CHECK_FALSE(p.can_write());
    p.write_done();
    CHECK(write(p) == d.bytes());
    CHECK(a.encodes == 1);
    CHECK_FALSE(p.idle());

    const std::string replies = "$5\r\nhello\r\n:42\r\n*2\r\n+x\r\n$-1\r\n_\r\n";
    REQUIRE_FALSE(feed(p, in, replies, piece));
    CHECK(log == std::vector<std::string>{"a", "b", "c", "d"});
    for (fake_request* r : {&a, &b, &c, &d}) {
      CHECK(r->done == 1);
      CHECK_FALSE(r->error);
    }
    REQUIRE(a.nodes.size() == 1);
    CHECK(a.nodes[0].type == resp::type::blob_string);
    CHECK(a.nodes[0].value == "hello");
    REQUIRE(b.nodes.size() == 1);
    CHECK(b.nodes[0].type == resp::type::integer);
    CHECK(b.nodes[0].value == "42");
    REQUIRE(c.nodes.size() == 3);
    CHECK(c.nodes[0].type == resp::type::array);
    CHECK(c.nodes[1].depth == 1);
    CHECK(c.nodes[1].value == "x");
    CHECK(c.nodes[2].type == resp::type::null);
    REQUIRE(d.nodes.size() == 1);
    CHECK(d.nodes[0].type == resp::type::null);
    CHECK(p.idle());
    CHECK(in.unread().empty());
  }
}

TEST_CASE("handshake commands are written first; user requests wait for end_handshake") {
  fake_request user1("user1"), user2("user2"), hello("HELLO"), select("SELECT");
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);

  p.submit(user1, far);
  CHECK_FALSE(p.can_write());
  p.submit_handshake(hello, far);
  p.submit_handshake(select, far);
  p.submit(user2, far);
  REQUIRE(p.can_write());
  CHECK(write(p) == hello.bytes() + select.bytes());
  CHECK_FALSE(p.can_write());  // still holding

  REQUIRE_FALSE(feed(p, in, "%1\r\n+server\r\n+redis\r\n+OK\r\n"));
  CHECK(hello.done == 1);
  CHECK_FALSE(hello.error);
  CHECK(hello.nodes.size() == 3);
  CHECK(select.done == 1);
  CHECK(user1.done == 0);
  CHECK_FALSE(p.can_write());

  p.end_handshake();
  CHECK(write(p) == user1.bytes() + user2.bytes());
  REQUIRE_FALSE(feed(p, in, ":1\r\n:2\r\n"));
  CHECK(user1.done == 1);
  CHECK(user2.done == 1);
  REQUIRE(user2.nodes.size() == 1);
  CHECK(user2.nodes[0].value == "2");
}

TEST_CASE("NOSCRIPT makes the pipeline resend the script with its body; the request never sees it") {
  // Declared before the pipeline, whose destructor fails whatever is still queued.
  fake_request script("s", true), plain("p"), retry("r", true), get("g"), s2("s2", true);
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);
  p.end_handshake();

  p.submit(script, far);
  p.submit(plain, far);
  CHECK(write(p) == script.bytes() + plain.bytes());
  CHECK(script.bytes().find("EVALSHA") != std::string::npos);

  REQUIRE_FALSE(feed(p, in, "-NOSCRIPT No matching script. Please use EVAL.\r\n+OK\r\n", 5));
  CHECK(script.done == 0);
  CHECK(script.nodes.empty());
  CHECK(script.send_script_body());
  CHECK(plain.done == 1);

  // Sent again, as EVAL.
  const std::string again = write(p);
  CHECK(again == cmd("EVAL", "return 1", 1, "s"));
  CHECK(script.encodes == 2);
  REQUIRE_FALSE(feed(p, in, ":1\r\n"));
  CHECK(script.done == 1);
  CHECK_FALSE(script.error);
  REQUIRE(script.nodes.size() == 1);
  CHECK(script.nodes[0].type == resp::type::integer);
  CHECK(p.idle());

  SUBCASE("a second NOSCRIPT (the EVAL itself failed) reaches the request") {
    p.submit(retry, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, "-NOSCRIPT No matching script.\r\n"));
    CHECK(retry.done == 0);
    CHECK(write(p) == cmd("EVAL", "return 1", 1, "r"));
    REQUIRE_FALSE(feed(p, in, "-NOSCRIPT still\r\n"));
    CHECK(retry.done == 1);
    REQUIRE(retry.nodes.size() == 1);
    CHECK(retry.nodes[0].type == resp::type::simple_error);
    CHECK(retry.nodes[0].value == "NOSCRIPT still");
  }
  SUBCASE("submitted again, a request that was sent with its body starts with EVALSHA") {
    p.submit(script, far);
    CHECK(write(p) == cmd("EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 1, "s"));
    CHECK_FALSE(script.send_script_body());
  }
  SUBCASE("NOSCRIPT to a request that runs no script is an ordinary error reply") {
    p.submit(get, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, "-NOSCRIPT odd\r\n"));
    CHECK(get.done == 1);
    REQUIRE(get.nodes.size() == 1);
    CHECK(get.nodes[0].value == "NOSCRIPT odd");
  }
  SUBCASE("other errors reach a script request") {
    p.submit(s2, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, "-ERR boom\r\n"));
    CHECK(s2.done == 1);
    CHECK_FALSE(s2.error);
    REQUIRE(s2.nodes.size() == 1);
    CHECK(s2.nodes[0].value == "ERR boom");
    CHECK_FALSE(s2.send_script_body());
  }
}

TEST_CASE("connection_lost fails sent requests and keeps unsent ones for the next connection") {
  std::vector<std::string> log;
  fake_request a("a"), b("b"), c("c"), d("d"), hello1("HELLO1"), hello2("HELLO2");
  for (fake_request* r : {&a, &b, &c, &d, &hello1, &hello2}) r->log = &log;
  detail::pipeline p(resp::limits{});
  {
    resp::read_buffer in(4096);
    p.submit_handshake(hello1, far);
    CHECK(write(p) == hello1.bytes());
    REQUIRE_FALSE(feed(p, in, "+OK\r\n"));
    p.end_handshake();

    p.submit(a, far);
    p.submit(b, far);
    CHECK(write(p) == a.bytes() + b.bytes());
    p.submit(c, far);
    p.submit(d, far);
    // Half of a's reply arrived before the link broke.
    REQUIRE_FALSE(feed(p, in, "*2\r\n:1\r\n"));
    CHECK(a.nodes.size() == 2);
  }
  p.connection_lost(errc::outcome_unknown);
  CHECK(log == std::vector<std::string>{"HELLO1", "a", "b"});
  CHECK(a.error == errc::outcome_unknown);
  CHECK(b.error == errc::outcome_unknown);
  CHECK(c.done == 0);
  CHECK(d.done == 0);
  CHECK_FALSE(p.can_write());  // held again until the next handshake

  // The next connection: a fresh read buffer, and the decoder starts clean (no half reply left).
  resp::read_buffer in(4096);
  p.submit_handshake(hello2, far);
  CHECK(write(p) == hello2.bytes());
  REQUIRE_FALSE(feed(p, in, "+OK\r\n"));
  p.end_handshake();
  CHECK(write(p) == c.bytes() + d.bytes());
  CHECK(c.encodes == 1);  // the bytes were kept, not re-encoded
  REQUIRE_FALSE(feed(p, in, ":3\r\n:4\r\n"));
  CHECK(c.done == 1);
  CHECK_FALSE(c.error);
  REQUIRE(c.nodes.size() == 1);
  CHECK(c.nodes[0].value == "3");
  CHECK(d.done == 1);
  CHECK(p.idle());
}

TEST_CASE("connection_lost details") {
  SUBCASE("handshake commands: written ones get the error, unwritten ones not_connected") {
    fake_request hello("HELLO"), select("SELECT"), user("u");
    detail::pipeline p(resp::limits{});
    p.submit(user, far);
    p.submit_handshake(hello, far);
    REQUIRE(p.can_write());
    CHECK(p.take_output() == hello.bytes());  // no write_done: the link broke during the write
    p.submit_handshake(select, far);
    p.connection_lost(errc::timed_out);
    CHECK(hello.error == errc::timed_out);
    CHECK(select.error == errc::not_connected);
    CHECK(user.done == 0);
    CHECK_FALSE(p.can_write());
    p.end_handshake();
    CHECK(write(p) == user.bytes());
    p.fail_all(errc::shutting_down);
    CHECK(user.error == errc::shutting_down);
  }
  SUBCASE("the given error is what sent requests see") {
    fake_request r("r");
    detail::pipeline p(resp::limits{});
    p.end_handshake();
    p.submit(r, far);
    write(p);
    p.connection_lost(resp::error::invalid_type_byte);
    CHECK(r.error == resp::error::invalid_type_byte);
  }
  SUBCASE("a request failed by connection_lost may submit again: it is written on the next connection") {
    fake_request r("r"), again("again");
    detail::pipeline p(resp::limits{});
    r.hook = [&](std::error_code) { p.submit(again, far); };
    p.end_handshake();
    p.submit(r, far);
    write(p);
    p.connection_lost(errc::outcome_unknown);
    CHECK(r.error == errc::outcome_unknown);
    CHECK(again.done == 0);
    CHECK_FALSE(p.can_write());
    p.end_handshake();
    CHECK(write(p) == again.bytes());
    resp::read_buffer in(256);
    REQUIRE_FALSE(feed(p, in, "+x\r\n"));
    CHECK(again.done == 1);
  }
  SUBCASE("a callback that drops the connection stops the routing of the rest of the input") {
    fake_request a("a"), b("b");
    detail::pipeline p(resp::limits{});
    a.hook = [&](std::error_code) { p.connection_lost(errc::outcome_unknown); };
    p.end_handshake();
    p.submit(a, far);
    p.submit(b, far);
    write(p);
    resp::read_buffer in(256);
    CHECK_FALSE(feed(p, in, ":1\r\n:2\r\n"));
    CHECK(a.done == 1);
    CHECK_FALSE(a.error);
    CHECK(b.done == 1);
    CHECK(b.error == errc::outcome_unknown);
    CHECK(b.nodes.empty());  // b's reply was not given to it
  }
}

TEST_CASE("fail_all fails everything, sent or not") {
  fake_request a("a"), b("b"), h("h");
  detail::pipeline p(resp::limits{});
  p.end_handshake();
  p.submit(a, far);
  write(p);
  p.submit(b, far);
  p.submit_handshake(h, far);
  p.fail_all(errc::shutting_down);
  CHECK(a.error == errc::shutting_down);
  CHECK(b.error == errc::shutting_down);
  CHECK(h.error == errc::not_connected);
  CHECK(p.idle());
  CHECK_FALSE(p.can_write());
}

TEST_CASE("expire fails queued requests past their deadline and reports a sent one") {
  std::vector<std::string> log;
  fake_request a("a"), b("b"), c("c"), d("d");
  for (fake_request* r : {&a, &b, &c, &d}) r->log = &log;
  detail::pipeline p(resp::limits{});
  CHECK(p.next_deadline() == 0);

  p.submit(a, 100);
  p.submit(b, 200);
  p.submit(c, 300);
  CHECK(p.next_deadline() == 100);
  CHECK_FALSE(p.expire(99, errc::not_connected));
  CHECK(log.empty());

  CHECK_FALSE(p.expire(200, errc::not_connected));  // a deadline equal to now has passed
  CHECK(log == std::vector<std::string>{"a", "b"});
  CHECK(a.error == errc::not_connected);
  CHECK(b.error == errc::not_connected);
  CHECK(c.done == 0);
  CHECK(p.next_deadline() == 300);

  // The expired requests' bytes are gone from the output; the rest are intact.
  p.end_handshake();
  p.submit(d, 400);
  CHECK(write(p) == c.bytes() + d.bytes());

  // Sent requests are not failed by expire(): it says the connection is stuck instead.
  CHECK(p.next_deadline() == 300);
  CHECK_FALSE(p.expire(299, errc::timed_out));
  CHECK(p.expire(300, errc::timed_out));
  CHECK(c.done == 0);
  CHECK(d.done == 0);
  p.connection_lost(errc::timed_out);
  CHECK(c.error == errc::timed_out);
  CHECK(d.error == errc::timed_out);
  CHECK(p.idle());
  CHECK(p.next_deadline() == 0);
}

TEST_CASE("expire in the middle: only the front part of the queue is dropped") {
  fake_request a("a"), b("b"), c("c");
  detail::pipeline p(resp::limits{});
  p.end_handshake();
  p.submit(a, 10);
  write(p);  // a is sent
  p.submit(b, 20);
  p.submit(c, 30);
  CHECK(p.next_deadline() == 10);
  CHECK(p.expire(25, errc::timed_out));  // a is sent and late; b is queued and late
  CHECK(a.done == 0);
  CHECK(b.error == errc::timed_out);
  CHECK(c.done == 0);
  CHECK(write(p) == c.bytes());
  resp::read_buffer in(256);
  REQUIRE_FALSE(feed(p, in, ":1\r\n:2\r\n"));
  CHECK(a.done == 1);
  CHECK_FALSE(a.error);
  CHECK(c.done == 1);
  CHECK_FALSE(c.error);
}

TEST_CASE("input errors: unsolicited replies and malformed bytes") {
  fake_request a("a");
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);
  p.end_handshake();

  SUBCASE("a reply when nothing was asked") {
    CHECK(feed(p, in, "+hello\r\n") == errc::protocol_error);
  }
  SUBCASE("one reply too many") {
    p.submit(a, far);
    write(p);
    CHECK(feed(p, in, ":1\r\n:2\r\n") == errc::protocol_error);
    CHECK(a.done == 1);
    CHECK_FALSE(a.error);
  }
  SUBCASE("a reply that arrives before the write completes still belongs to the written request") {
    p.submit(a, far);
    REQUIRE(p.can_write());
    p.take_output();
    REQUIRE_FALSE(feed(p, in, ":1\r\n"));
    CHECK(a.done == 1);
    p.write_done();
  }
  SUBCASE("a malformed reply is the decoder's error, and the requests stay for connection_lost") {
    p.submit(a, far);
    write(p);
    CHECK(feed(p, in, "?what\r\n") == resp::error::invalid_type_byte);
    CHECK(a.done == 0);
    p.connection_lost(resp::error::invalid_type_byte);
    CHECK(a.error == resp::error::invalid_type_byte);
  }
  SUBCASE("a reply beyond the limits") {
    p.submit(a, far);
    write(p);
    CHECK(feed(p, in, "$999999999999\r\n") == resp::error::bulk_limit_exceeded);
  }
}

TEST_CASE("RESP3 pushes go to the push handler, replies to requests") {
  fake_push pushes;
  fake_request a("a"), b("b");
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);
  p.end_handshake();
  p.set_push_handler(&pushes, false);

  // A push with no request outstanding is not an error.
  REQUIRE_FALSE(feed(p, in, ">3\r\n+message\r\n+ch\r\n+0\r\n", 2));
  CHECK(pushes.replies == 1);
  REQUIRE(pushes.nodes.size() == 4);
  CHECK(pushes.nodes[0].type == resp::type::push);
  CHECK_FALSE(pushes.nodes[0].end);
  CHECK(pushes.nodes[2].value == "ch");
  CHECK(pushes.nodes[3].end);

  // Pushes interleaved with replies.
  p.submit(a, far);
  p.submit(b, far);
  write(p);
  REQUIRE_FALSE(feed(p, in, ">2\r\n+invalidate\r\n*1\r\n$1\r\nk\r\n:1\r\n>3\r\n+message\r\n+ch\r\n+1\r\n*1\r\n:2\r\n", 3));
  CHECK(pushes.replies == 3);
  CHECK(a.done == 1);
  REQUIRE(a.nodes.size() == 1);
  CHECK(a.nodes[0].value == "1");
  CHECK(b.done == 1);
  REQUIRE(b.nodes.size() == 2);
  CHECK(b.nodes[0].type == resp::type::array);
  CHECK(b.nodes[1].value == "2");
  CHECK(p.idle());
}

TEST_CASE("a RESP3 push with no push handler answers no request and is dropped") {
  fake_request a("a");
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);
  p.end_handshake();
  p.submit(a, far);
  write(p);
  REQUIRE_FALSE(feed(p, in, ">2\r\n+invalidate\r\n*0\r\n:7\r\n"));
  CHECK(a.done == 1);
  REQUIRE(a.nodes.size() == 1);
  CHECK(a.nodes[0].type == resp::type::integer);
  CHECK(a.nodes[0].value == "7");
  CHECK_FALSE(feed(p, in, ">1\r\n+x\r\n"));  // nothing outstanding: still no error
}

TEST_CASE("subscriber mode: every reply is a push and requests complete once written") {
  fake_push pushes;
  fake_request sub("SUBSCRIBE"), unsub("UNSUBSCRIBE"), lost("SUBSCRIBE2"), get("get");
  detail::pipeline p(resp::limits{});
  resp::read_buffer in(4096);
  p.end_handshake();
  p.set_push_handler(&pushes, true);

  p.submit(sub, far);
  p.submit(unsub, far);
  REQUIRE(p.can_write());
  CHECK(p.take_output() == sub.bytes() + unsub.bytes());
  CHECK(sub.done == 0);
  p.write_done();
  CHECK(sub.done == 1);
  CHECK_FALSE(sub.error);
  CHECK(unsub.done == 1);
  CHECK(p.idle());

  // RESP2-style confirmations and messages (arrays) are pushes here, as are RESP3 '>' ones.
  REQUIRE_FALSE(feed(p, in, "*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n>3\r\n+message\r\n+ch\r\n+0\r\n+PONG\r\n", 4));
  CHECK(pushes.replies == 3);
  CHECK(sub.nodes.empty());
  REQUIRE(pushes.nodes.size() == 9);
  CHECK(pushes.nodes[1].value == "subscribe");
  CHECK(pushes.nodes[8].value == "PONG");
  CHECK(pushes.nodes[8].end);

  // Written but the write never completed: the connection broke, so the request fails.
  p.submit(lost, far);
  REQUIRE(p.can_write());
  p.take_output();
  p.connection_lost(errc::outcome_unknown);
  CHECK(lost.error == errc::outcome_unknown);

  // Back to command mode (the connection does this on a drop): replies go to requests again.
  p.set_push_handler(&pushes, false);
  p.end_handshake();
  p.submit(get, far);
  write(p);
  resp::read_buffer in2(256);
  REQUIRE_FALSE(feed(p, in2, ":5\r\n"));
  CHECK(get.done == 1);
  REQUIRE(get.nodes.size() == 1);
}

namespace {

// Records the requests a cluster topology would take back.
class fake_redirects final : public detail::redirect_handler {
 public:
  void on_redirect(detail::request& r, std::string_view error_text) override {
    taken.push_back(&r);
    texts.emplace_back(error_text);
  }
  std::vector<detail::request*> taken;
  std::vector<std::string> texts;
};

}  // namespace

TEST_CASE("cluster redirections go to the topology, not to the request; other errors still do") {
  detail::pipeline p({});
  p.end_handshake();
  resp::read_buffer in(4096);
  fake_redirects redirects;
  p.set_redirect_handler(&redirects);
  fake_request moved("m"), ask("a"), again("t"), down("d"), plain("p"), crossslot("x");
  for (fake_request* r : {&moved, &ask, &again, &down, &plain, &crossslot}) p.submit(*r, far);
  write(p);
  REQUIRE_FALSE(feed(p, in,
                     "-MOVED 3999 127.0.0.1:7001\r\n-ASK 3999 127.0.0.1:7002\r\n-TRYAGAIN Multiple keys request "
                     "during rehashing of slot\r\n-CLUSTERDOWN The cluster is down\r\n$1\r\nv\r\n"
                     "-CROSSSLOT Keys in request don't hash to the same slot\r\n",
                     3));
  REQUIRE(redirects.taken.size() == 4);
  CHECK(redirects.taken[0] == &moved);
  CHECK(redirects.texts[0] == "MOVED 3999 127.0.0.1:7001");
  CHECK(redirects.taken[1] == &ask);
  CHECK(redirects.taken[3] == &down);
  for (fake_request* r : {&moved, &ask, &again, &down}) {
    CHECK(r->done == 0);  // the topology decides its fate
    CHECK(r->nodes.empty());
  }
  CHECK(plain.done == 1);
  CHECK(plain.nodes.size() == 1);
  REQUIRE(crossslot.done == 1);
  CHECK(crossslot.nodes.front().value.rfind("CROSSSLOT", 0) == 0);
  CHECK(p.idle());

  // Without a handler (a standalone server) the request hears the error itself.
  detail::pipeline standalone({});
  standalone.end_handshake();
  resp::read_buffer in2(4096);
  fake_request lone("l");
  standalone.submit(lone, far);
  write(standalone);
  REQUIRE_FALSE(feed(standalone, in2, "-MOVED 1 127.0.0.1:7001\r\n"));
  CHECK(lone.done == 1);
  CHECK(lone.nodes.front().value == "MOVED 1 127.0.0.1:7001");
}

TEST_CASE("an ASK resend writes ASKING right before the command and its answer reaches nobody") {
  detail::pipeline p({});
  p.end_handshake();
  resp::read_buffer in(4096);
  fake_request before("b"), asked("a"), after("c");
  detail::request_test_access::set_asking(asked, true);
  for (fake_request* r : {&before, &asked, &after}) p.submit(*r, far);
  CHECK(write(p) == cmd("GET", "b") + cmd("ASKING") + cmd("GET", "a") + cmd("GET", "c"));
  REQUIRE_FALSE(feed(p, in, "$2\r\nvb\r\n+OK\r\n$2\r\nva\r\n$2\r\nvc\r\n", 1));
  REQUIRE(asked.done == 1);
  REQUIRE(asked.nodes.size() == 1);
  CHECK(asked.nodes[0].value == "va");
  CHECK(before.nodes[0].value == "vb");
  CHECK(after.nodes[0].value == "vc");

  // Re-encoded after a dropped connection: ASKING again.
  fake_request again("r");
  detail::request_test_access::set_asking(again, true);
  p.submit(again, far);
  p.connection_lost(errc::outcome_unknown);
  p.end_handshake();
  CHECK(write(p) == cmd("ASKING") + cmd("GET", "r"));
  REQUIRE_FALSE(feed(p, in, "+OK\r\n$1\r\nx\r\n"));
  CHECK(again.done == 1);
  CHECK(again.nodes.size() == 1);
}

TEST_CASE("replica sync: one WAIT ends a write with synced requests; its answer reaches each of them") {
  detail::pipeline p({});
  p.replicas().configure(detail::sync_policy::automatic, 250);
  resp::read_buffer in(4096);
  fake_request early("e", true), plain("p"), later("l", true);
  early.syncs_replicas = true;
  later.syncs_replicas = true;
  p.submit(early, far);  // queued during the login, before ROLE answered: decided when written
  p.replicas().learned(2, 0);
  p.end_handshake();
  p.submit(plain, far);
  p.submit(later, far);
  CHECK(write(p) == early.bytes() + plain.bytes() + later.bytes() + cmd("WAIT", 1, 250));
  CHECK(early.deadline_ns() == far + 250'000'000);  // WAIT's own wait is allowed for
  CHECK(later.deadline_ns() == far + 250'000'000);
  CHECK(plain.deadline_ns() == far);
  CHECK(p.waiting_for_replicas());

  REQUIRE_FALSE(feed(p, in, ":1\r\n$1\r\nv\r\n:1\r\n", 1));
  CHECK(plain.done == 1);  // answered before the WAIT: it does not wait for it
  CHECK(early.done == 0);
  CHECK(later.done == 0);
  REQUIRE_FALSE(feed(p, in, ":0\r\n", 1));
  CHECK(early.done == 1);
  CHECK(early.nodes.size() == 1);  // the script's reply only
  CHECK(early.replicas_wanted() == 1);
  CHECK(early.replicas_unsynced());
  CHECK(later.done == 1);
  CHECK(later.replicas_unsynced());
  CHECK(p.replicas().probe_due(0));  // none acknowledged: ask ROLE again
  CHECK_FALSE(p.waiting_for_replicas());
  CHECK(p.idle());

  fake_request again("a", true), read("r");
  again.syncs_replicas = true;
  p.replicas().learned(1, 0);
  p.submit(again, far);
  p.submit(read, far);
  CHECK(write(p) == again.bytes() + read.bytes() + cmd("WAIT", 1, 250));
  REQUIRE_FALSE(feed(p, in, ":1\r\n$1\r\nv\r\n:1\r\n"));
  CHECK(again.replicas_acked() == 1);
  CHECK_FALSE(again.replicas_unsynced());
  CHECK(read.replicas_wanted() == 0);  // not a synced request: the WAIT is none of its business
}

TEST_CASE("replica sync: a WAIT in flight holds what is queued behind it, which shares the next WAIT and is not stuck") {
  // Issue 25: eight synced requests used to queue eight WAITs, each deadline allowing for one; the
  // fifth ran past its deadline and the connection was dropped as stuck.
  constexpr std::int64_t wait_ns = 1'000'000'000;
  constexpr std::int64_t timeout_ns = 3'000'000'000;  // command_timeout
  detail::pipeline p({});
  p.replicas().configure(detail::sync_policy::automatic, 1000);
  p.replicas().learned(1, 0);
  p.end_handshake();
  resp::read_buffer in(4096);
  std::vector<std::unique_ptr<fake_request>> rs;
  for (int i = 0; i < 8; ++i) {
    rs.push_back(std::make_unique<fake_request>("k" + std::to_string(i), true));
    rs.back()->syncs_replicas = true;
  }
  p.submit(*rs[0], timeout_ns);
  CHECK(write(p) == rs[0]->bytes() + cmd("WAIT", 1, 1000));
  std::string held;
  for (int i = 1; i < 8; ++i) {
    p.submit(*rs[static_cast<std::size_t>(i)], timeout_ns);  // at t = 0 too
    held += rs[static_cast<std::size_t>(i)]->bytes();
  }
  CHECK_FALSE(p.can_write());  // the server runs nothing of ours before the WAIT answers
  CHECK(rs[7]->deadline_ns() == timeout_ns + wait_ns);  // held behind that WAIT: allowed for

  REQUIRE_FALSE(feed(p, in, ":1\r\n"));  // the script's reply; the WAIT runs its timeout out
  CHECK_FALSE(p.expire(timeout_ns + wait_ns - 1, errc::timed_out));
  REQUIRE_FALSE(feed(p, in, ":0\r\n"));
  CHECK(rs[0]->done == 1);
  CHECK(rs[0]->replicas_unsynced());
  // The seven held ones go together, with one WAIT: each waits two WAITs at most, not eight.
  CHECK(write(p) == held + cmd("WAIT", 1, 1000));
  CHECK(rs[7]->deadline_ns() == timeout_ns + 2 * wait_ns);
  REQUIRE_FALSE(feed(p, in, ":1\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n:1\r\n"));
  CHECK_FALSE(p.expire(timeout_ns + 2 * wait_ns - 1, errc::timed_out));  // blocked in WAIT, not stuck
  for (const auto& r : rs) CHECK(r->error == std::error_code());
  // A WAIT that never answers makes the connection stuck once what it answers for is out of time.
  CHECK(p.expire(timeout_ns + 2 * wait_ns, errc::timed_out));
  p.connection_lost(errc::timed_out);
  for (std::size_t i = 1; i < rs.size(); ++i) {
    CHECK(rs[i]->done == 1);
    CHECK(rs[i]->error == errc::timed_out);  // answered, but whether a replica has it is unknown
  }
  CHECK(p.idle());
}

TEST_CASE("replica sync: a redirected or NOSCRIPT request leaves the WAIT to the others") {
  detail::pipeline p({});
  p.replicas().configure(detail::sync_policy::required, 100);  // WAIT even with no replica known
  p.end_handshake();
  resp::read_buffer in(4096);
  fake_redirects redirects;
  p.set_redirect_handler(&redirects);
  fake_request moved("m", true), noscript("n", true), after("a"), synced("s", true);
  moved.syncs_replicas = true;
  noscript.syncs_replicas = true;
  synced.syncs_replicas = true;
  for (fake_request* r : {&moved, &noscript, &after, &synced}) p.submit(*r, far);
  CHECK(write(p) == moved.bytes() + noscript.bytes() + after.bytes() + synced.bytes() + cmd("WAIT", 1, 100));
  REQUIRE_FALSE(feed(p, in, "-MOVED 1 127.0.0.1:7001\r\n-NOSCRIPT No matching script\r\n$1\r\nv\r\n:1\r\n:1\r\n", 2));
  REQUIRE(redirects.taken.size() == 1);
  CHECK(redirects.taken[0] == &moved);
  CHECK(after.done == 1);
  CHECK(after.nodes.size() == 1);
  CHECK(after.nodes[0].value == "v");
  CHECK(synced.done == 1);
  CHECK(synced.replicas_acked() == 1);
  CHECK(noscript.done == 0);  // sent again with its body, and a WAIT of its own
  CHECK(write(p) == cmd("EVAL", "return 1", 1, "n") + cmd("WAIT", 1, 100));
  REQUIRE_FALSE(feed(p, in, ":1\r\n-ERR unknown command 'WAIT'\r\n"));
  CHECK(noscript.done == 1);
  CHECK(noscript.replicas_unsynced());  // required: a refused WAIT is no sync
}

TEST_CASE("replica sync: automatic mode with a refused WAIT stops asking; a connection lost mid-WAIT fails what awaits it") {
  detail::pipeline p({});
  p.replicas().configure(detail::sync_policy::automatic, 100);
  p.replicas().learned(1, 0);
  p.end_handshake();
  resp::read_buffer in(4096);
  fake_request first("f", true), second("s", true);
  first.syncs_replicas = second.syncs_replicas = true;
  p.submit(first, far);
  write(p);
  REQUIRE_FALSE(feed(p, in, ":1\r\n-ERR unknown command 'WAIT'\r\n"));
  CHECK(first.replicas_acked() == -1);  // not checked
  CHECK_FALSE(first.replicas_unsynced());
  p.submit(second, far);
  CHECK(write(p) == second.bytes());  // no WAIT any more on this connection
  REQUIRE_FALSE(feed(p, in, "$1\r\nv\r\n"));
  CHECK(second.done == 1);
  p.replicas().learned(1, 0);  // the next login's ROLE: asked again
  CHECK(p.replicas().wanted() == 1);

  fake_request answered("a", true), unanswered("u", true);
  answered.syncs_replicas = unanswered.syncs_replicas = true;
  p.submit(answered, far);
  p.submit(unanswered, far);
  write(p);
  REQUIRE_FALSE(feed(p, in, ":1\r\n"));  // answered's reply; nothing more
  CHECK(answered.done == 0);
  p.connection_lost(errc::outcome_unknown);  // the WAIT answer never comes
  CHECK(answered.done == 1);
  CHECK(answered.error == errc::outcome_unknown);
  CHECK(unanswered.done == 1);
  CHECK_FALSE(p.waiting_for_replicas());
  fake_request next("x");
  p.end_handshake();
  p.submit(next, far);
  CHECK(write(p) == next.bytes());
  REQUIRE_FALSE(feed(p, in, "$1\r\ny\r\n"));
  CHECK(next.done == 1);  // its reply is its own
  CHECK(next.nodes.size() == 1);
}

namespace {
// Hears what the pipeline reports of error replies (a connection logs them).
struct fake_error_listener final : detail::error_reply_listener {
  std::vector<std::pair<std::string, bool>> wait_refusals;  // (server's words, sync off)
  void on_error_reply(const detail::request&, std::string_view) override {}
  void on_wait_refused(std::string_view text, bool sync_off) override { wait_refusals.emplace_back(text, sync_off); }
};
}  // namespace

TEST_CASE("replica sync: a refused WAIT is reported, once until ROLE answers again") {
  for (const auto policy : {detail::sync_policy::automatic, detail::sync_policy::required}) {
    const bool automatic = policy == detail::sync_policy::automatic;
    INFO("automatic: " << automatic);
    detail::pipeline p({});
    fake_error_listener errors;
    p.set_error_listener(&errors);
    p.replicas().configure(policy, 100);
    p.replicas().learned(1, 0);
    p.end_handshake();
    resp::read_buffer in(4096);
    fake_request first("f", true), second("s", true), third("t", true);
    for (fake_request* r : {&first, &second, &third}) r->syncs_replicas = true;
    p.submit(first, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, ":1\r\n-ERR unknown command 'WAIT'\r\n"));
    REQUIRE(errors.wait_refusals.size() == 1);
    CHECK(errors.wait_refusals[0].first == "ERR unknown command 'WAIT'");
    CHECK(errors.wait_refusals[0].second == automatic);  // automatic stops asking; required counts it unsynced
    p.submit(second, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, automatic ? ":1\r\n" : ":1\r\n-ERR unknown command 'WAIT'\r\n"));
    CHECK(second.done == 1);
    CHECK(errors.wait_refusals.size() == 1);  // not news: not reported again
    p.replicas().learned(1, 0);  // ROLE answered (a login, a probe): a refusal is news again
    p.submit(third, far);
    write(p);
    REQUIRE_FALSE(feed(p, in, ":1\r\n-ERR unknown command 'WAIT'\r\n"));
    CHECK(third.done == 1);
    CHECK(errors.wait_refusals.size() == 2);
  }
}

namespace {
// A master's ROLE reply listing replicas on 127.0.0.1 at `ports`, in RESP.
std::string master_role(const std::vector<int>& ports) {
  const auto bulk = [](const std::string& s) { return "$" + std::to_string(s.size()) + "\r\n" + s + "\r\n"; };
  std::string out = "*3\r\n" + bulk("master") + ":100\r\n*" + std::to_string(ports.size()) + "\r\n";
  for (int port : ports) out += "*3\r\n" + bulk("127.0.0.1") + bulk(std::to_string(port)) + bulk("100");
  return out;
}

// The login's ROLE, read as the connection reads it.
detail::role_reader role_of(const std::string& bytes) {
  detail::role_reader role;
  resp::decoder decoder;
  std::string_view rest = bytes;
  for (bool end = false; !end;) {
    const resp::parse_result r = decoder.next(rest);
    REQUIRE(r.what == resp::parse_result::kind::node);
    role.take(r.node);
    rest.remove_prefix(r.consumed);
    end = r.end_of_reply;
  }
  return role;
}
}  // namespace

TEST_CASE("replica sync: a ROLE follows each WAIT; a replica the master no longer lists makes the acknowledgement count for nothing") {
  // Issue 27: a planned Sentinel failover promotes one replica (it leaves the old master's list) while
  // the old master, still writable, has its WAIT acknowledged by the other one, which the new master
  // never hears from: the hold was reported acquired, and a client on the new master took it too.
  detail::pipeline p({});
  p.replicas().configure(detail::sync_policy::automatic, 250);
  p.replicas().learned(role_of(master_role({6380, 6381})), 0);  // the login's ROLE
  p.end_handshake();
  resp::read_buffer in(4096);

  fake_request first("a", true), plain("p");
  first.syncs_replicas = true;
  p.submit(first, far);
  p.submit(plain, far);
  CHECK(write(p) == first.bytes() + plain.bytes() + cmd("WAIT", 1, 250) + cmd("ROLE"));
  REQUIRE_FALSE(feed(p, in, ":1\r\n$1\r\nv\r\n:1\r\n"));
  CHECK(plain.done == 1);
  CHECK(first.done == 0);  // done when the ROLE after the WAIT has answered
  CHECK(p.waiting_for_replicas());
  CHECK_FALSE(p.can_write());
  REQUIRE_FALSE(feed(p, in, master_role({6380, 6381}), 3));
  CHECK(first.done == 1);
  CHECK(first.replicas_acked() == 1);
  CHECK_FALSE(first.replicas_unsynced());
  CHECK(first.nodes.size() == 1);  // neither the WAIT's answer nor the ROLE's reach it
  CHECK_FALSE(p.waiting_for_replicas());

  fake_request promoted("b", true);  // 6380 was promoted; 6381 still follows and acknowledges
  promoted.syncs_replicas = true;
  p.submit(promoted, far);
  CHECK(write(p) == promoted.bytes() + cmd("WAIT", 1, 250) + cmd("ROLE"));
  REQUIRE_FALSE(feed(p, in, ":1\r\n:1\r\n" + master_role({6381})));
  CHECK(promoted.done == 1);
  CHECK(promoted.replicas_wanted() == 1);
  CHECK(promoted.replicas_unsynced());  // acknowledged, but not counted
  CHECK_FALSE(p.replicas().roster().trusted());
  const auto* ask = p.replicas().roster().ask_due(0);  // the connection asks 6380 what it is now
  REQUIRE(ask != nullptr);
  CHECK(ask->port == 6380);

  // Both replicas moved to the new master: the old one lists none. While 6380 may be a master,
  // even a master without replicas WAITs (and what is written there is not synced).
  p.replicas().roster().answered("127.0.0.1", 6380, true, 0);
  fake_request alone("c", true);
  alone.syncs_replicas = true;
  p.submit(alone, far);
  CHECK(write(p) == alone.bytes() + cmd("WAIT", 1, 250) + cmd("ROLE"));
  REQUIRE_FALSE(feed(p, in, ":1\r\n:0\r\n" + master_role({})));
  CHECK(alone.replicas_unsynced());
  CHECK(p.replicas().wanted() == 1);

  // The connection lost before the ROLE answered: what awaits it fails as when the WAIT is lost.
  fake_request lost("d", true);
  lost.syncs_replicas = true;
  p.submit(lost, far);
  write(p);
  REQUIRE_FALSE(feed(p, in, ":1\r\n:0\r\n"));
  CHECK(lost.done == 0);
  p.connection_lost(errc::outcome_unknown);
  CHECK(lost.done == 1);
  CHECK(lost.error == errc::outcome_unknown);
  CHECK_FALSE(p.waiting_for_replicas());
  CHECK(p.idle());
}
