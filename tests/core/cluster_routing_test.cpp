// The cluster's routing decisions, driven without sockets: requests parked until the layout and the
// pub/sub mode are known and then released in order, migrations (MOVED, then the layout), ASK with
// ASKING for one resend, TRYAGAIN and redirect loops backed off until their give-up time, the layout
// asked in turn of the nodes (a lost reply, a node down, every seed refusing), a full node table,
// nodes down and up, the pub/sub probe and its bound, refused subscriptions, and closing.
#include <doctest/doctest.h>

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/key_slot.hpp"
#include "cluster/cluster_routing.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/reply.hpp"

// Its own namespace: the core tests are built as one unit (unity build).
namespace cluster_routing_suite {

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;
using deadbolt::errc;
using deadbolt::reply;
using routing = detail::cluster_routing;
using act = routing::action::kind;

namespace {

constexpr std::int64_t ms = 1'000'000;  // in ns

// Keys by the slot they fall in: the first three below 8192, the others above.
constexpr std::string_view low_key = "bar";        // slot 5061
constexpr std::string_view low_key2 = "hello";     // slot 866
constexpr std::string_view high_key = "foo";       // slot 12182
constexpr std::string_view high_key2 = "somekey";  // slot 11058

// A request as an operation makes it: a name for the action log, a key, and what it completed with.
struct test_request final : detail::request {
  test_request(std::string name, std::string_view key) : name(std::move(name)), key(key) { route_key = this->key; }
  void encode(resp::encoder&) override {}
  void on_node(const resp::node&) override {}
  void on_done(std::error_code why) override {
    ec = why;
    ++done;
  }
  std::string name;
  std::string key;
  std::error_code ec;
  int done = 0;
};

struct node_usage final : detail::cluster_node_usage {
  bool busy(std::uint16_t node) const override { return node < in_use.size() && in_use[node]; }
  std::vector<bool> in_use = std::vector<bool>(16, false);
};

detail::server_address node_at(std::uint16_t port) {
  detail::server_address a;
  a.host = "127.0.0.1";
  a.port = port;
  a.numeric = true;
  return a;
}

std::string error_name(std::error_code ec) {
  if (!ec) return "ok";
  if (ec.category() != deadbolt::deadbolt_category()) return ec.message();
  switch (static_cast<errc>(ec.value())) {
    case errc::not_connected: return "not_connected";
    case errc::timed_out: return "timed_out";
    case errc::shutting_down: return "shutting_down";
    case errc::node_table_full: return "node_table_full";
    case errc::cluster_down: return "cluster_down";
    case errc::redirect_loop: return "redirect_loop";
    case errc::cross_slot: return "cross_slot";
    case errc::permission_denied: return "permission_denied";
    case errc::server_error: return "server_error";
    default: return ec.message();
  }
}

std::string name_of(const detail::request* r) { return static_cast<const test_request*>(r)->name; }

// One action in words; completions are carried out (the request records them), as the driver would.
std::string carry_out(const routing& core, routing::action& a) {
  const std::string n = std::to_string(a.node);
  switch (a.what) {
    case act::none: return "none";
    case act::open_node: {
      const auto& where = core.address(a.node);
      return "open " + n + " " + where.host + ":" + std::to_string(where.port);
    }
    case act::send: return "send " + name_of(a.req) + ">" + n;
    case act::fail: {
      std::string s = "fail " + name_of(a.req) + ": " + error_name(a.error);
      a.req->on_done(a.error);
      return s;
    }
    case act::refuse: {
      std::string s = "refuse " + name_of(a.req) + ": " + error_name(a.error);
      a.req->on_done(a.error);
      return s;
    }
    case act::fail_all: {
      std::string s = "fail";
      while (detail::request* r = a.requests.pop_front()) {
        s += " " + name_of(r);
        r->on_done(a.error);
      }
      return s + ": " + error_name(a.error);
    }
    case act::ask_layout: return "ask " + n + (a.shards ? " shards" : " slots");
    case act::probe_pubsub: return "probe " + n + " " + std::to_string(a.delay_ms) + "ms";
    case act::cancel_probe_timer: return "cancel_probe";
    case act::arm_tick: return "tick " + std::to_string(a.delay_ms) + "ms";
    case act::drop_node: return "drop " + n + ": " + error_name(a.error);
    case act::pubsub_decided:
      return core.pubsub_mode() == routing::pubsub::sharded ? "mode sharded" : "mode classic";
    case act::replace_subscriptions: return "replace";
    case act::layout_read: return "layout from " + n;
    case act::no_layout: return "no_layout (" + std::string(core.refusal()) + ")";
    case act::probe_unanswered:
      return "probe_unanswered " + n + (a.decided ? " decided" : " again");
  }
  return "?";
}

std::string next_actions(routing& core) {
  std::string out;
  for (auto a = core.next(); a.what != act::none; a = core.next()) {
    out += (out.empty() ? "" : ", ") + carry_out(core, a);
  }
  return out;
}

reply integer(std::int64_t v) {
  reply r;
  r.type = resp::type::integer;
  r.text = std::to_string(v);
  return r;
}
reply bulk(std::string_view s) {
  reply r;
  r.type = resp::type::blob_string;
  r.text.assign(s);
  return r;
}
reply array(std::vector<reply> elements) {
  reply r;
  r.type = resp::type::array;
  r.elements = std::move(elements);
  return r;
}
reply error_reply(std::string_view text) {
  reply r;
  r.type = resp::type::simple_error;
  r.text.assign(text);
  return r;
}

struct shard {
  std::uint16_t first;
  std::uint16_t last;
  std::uint16_t port;  // its master, on 127.0.0.1
};

// A CLUSTER SHARDS answer (RESP2: maps as flat arrays), one master per shard.
reply shards_reply(std::initializer_list<shard> shards) {
  std::vector<reply> out;
  for (const shard& s : shards) {
    reply master = array({bulk("endpoint"), bulk("127.0.0.1"), bulk("port"), integer(s.port), bulk("role"),
                          bulk("master"), bulk("health"), bulk("online")});
    out.push_back(array({bulk("slots"), array({integer(s.first), integer(s.last)}), bulk("nodes"),
                         array({std::move(master)})}));
  }
  return array(std::move(out));
}

// A CLUSTER SLOTS answer.
reply slots_reply(std::initializer_list<shard> shards) {
  std::vector<reply> out;
  for (const shard& s : shards) {
    out.push_back(array({integer(s.first), integer(s.last), array({bulk("127.0.0.1"), integer(s.port), bulk("id")})}));
  }
  return array(std::move(out));
}

// The usual layout: 7000 (the seed) serves the low half, 7001 the high half.
reply two_masters() { return shards_reply({{0, 8191, 7000}, {8192, 16383, 7001}}); }

detail::cluster_routing_settings settings(std::size_t max_nodes = 4,
                                          detail::cluster_routing_settings::pubsub mode =
                                              detail::cluster_routing_settings::pubsub::classic) {
  detail::cluster_routing_settings s;
  s.max_nodes = max_nodes;
  s.command_timeout_ms = 3000;
  s.cluster_pubsub = mode;
  return s;
}

// A routing over seeds (ports on 127.0.0.1), its time, and the driver's view of busy connections.
struct harness {
  explicit harness(detail::cluster_routing_settings s = settings(), std::vector<std::uint16_t> seed_ports = {7000}) {
    std::vector<detail::server_address> seeds;
    for (auto p : seed_ports) seeds.push_back(node_at(p));
    core = std::make_unique<routing>(s, seeds, usage);
  }
  std::string actions() { return next_actions(*core); }
  void submit(test_request& r) { core->submit(r, now); }
  void layout(const reply& answer) { core->layout_answered({}, answer, now); }
  void redirect(std::uint16_t from, test_request& r, std::string_view text) { core->redirected(from, r, text, now); }
  void tick_after(std::int64_t delta_ms) {
    now += delta_ms * ms;
    core->tick(now);
  }

  node_usage usage;
  std::unique_ptr<routing> core;
  std::int64_t now = 1'000 * ms;
};

// Takes a fresh harness (classic pub/sub, seed 7000) to a known two-master layout.
void learn_two_masters(harness& h) {
  REQUIRE(h.actions() == "mode classic, open 0 127.0.0.1:7000");
  test_request first("first", low_key);
  h.submit(first);
  REQUIRE(h.actions() == "ask 0 shards, tick 100ms");
  h.layout(two_masters());
  REQUIRE(h.actions() == "open 1 127.0.0.1:7001, layout from 0, replace, send first>0");
  REQUIRE(h.core->layout_known());
  h.tick_after(100);  // the tick armed for the first request: nothing waits any more, none is armed
  REQUIRE(h.actions().empty());
}

}  // namespace

TEST_CASE("cluster routing: requests wait for the layout, then go to their slot's master in order") {
  harness h;
  CHECK(h.actions() == "mode classic, open 0 127.0.0.1:7000");
  test_request a("a", low_key), b("b", high_key), c("c", low_key2), d("d", high_key2);
  h.submit(a);
  CHECK(h.actions() == "ask 0 shards, tick 100ms");  // one layout query, one tick, whatever waits
  h.submit(b);
  h.submit(c);
  CHECK(h.actions().empty());
  CHECK(h.core->anything_waits());
  CHECK(h.core->node_of(low_key) == routing::no_node);
  CHECK(h.core->channel_master(low_key) == nullptr);

  h.layout(two_masters());
  CHECK(h.actions() == "open 1 127.0.0.1:7001, layout from 0, replace, send a>0, send b>1, send c>0");
  CHECK_FALSE(h.core->anything_waits());
  CHECK(h.core->node_of(high_key) == 1);
  REQUIRE(h.core->channel_master(high_key) != nullptr);
  CHECK(h.core->channel_master(high_key)->port == 7001);
  // Known from now on: routed at once.
  h.submit(d);
  CHECK(h.actions() == "send d>1");
  CHECK(a.route().give_up_ns == h.now + 3000 * ms);  // it waited: its give-up time was set
  CHECK(d.route().give_up_ns == 0);
}

TEST_CASE("cluster routing: a server without CLUSTER SHARDS is asked CLUSTER SLOTS, the same node") {
  harness h(settings(), {7000, 7005});
  CHECK(h.actions() == "mode classic, open 0 127.0.0.1:7000, open 1 127.0.0.1:7005");
  test_request a("a", high_key);
  h.submit(a);
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  h.layout(error_reply("ERR unknown subcommand 'SHARDS'. Try CLUSTER HELP."));
  CHECK(h.actions() == "ask 0 slots");
  h.layout(slots_reply({{0, 16383, 7002}}));
  CHECK(h.actions() == "open 2 127.0.0.1:7002, layout from 0, replace, send a>2");
}

TEST_CASE("cluster routing: a migration: MOVED resends at once to the new owner, which is asked the layout") {
  harness h;
  learn_two_masters(h);
  test_request r("r", low_key);
  h.submit(r);
  REQUIRE(h.actions() == "send r>0");
  const auto slot = std::to_string(detail::key_slot(low_key));
  h.redirect(0, r, "MOVED " + slot + " 127.0.0.1:7002");
  CHECK(h.actions() == "open 2 127.0.0.1:7002, ask 2 shards, send r>2");
  CHECK_FALSE(r.route().asking);
  CHECK(r.route().redirects == 1);
  // The moved slot is the new owner's at once; the others wait for the layout.
  CHECK(h.core->node_of(low_key) == 2);
  CHECK(h.core->node_of(low_key2) == 0);
  h.layout(shards_reply({{0, 4999, 7000}, {5000, 8191, 7002}, {8192, 16383, 7001}}));
  CHECK(h.actions() == "layout from 2, replace");
  CHECK(h.core->node_of(low_key) == 2);
  test_request again("again", low_key);
  h.submit(again);
  CHECK(h.actions() == "send again>2");
  // The next refresh asks the node that answered last.
  h.core->layout_stale();
  CHECK(h.actions() == "ask 2 shards");
}

TEST_CASE("cluster routing: ASK resends once with ASKING, and moves no slot") {
  harness h;
  learn_two_masters(h);
  test_request r("r", high_key);
  h.submit(r);
  REQUIRE(h.actions() == "send r>1");
  const auto slot = std::to_string(detail::key_slot(high_key));
  h.redirect(1, r, "ASK " + slot + " 127.0.0.1:7002");
  CHECK(h.actions() == "open 2 127.0.0.1:7002, send r>2");  // no layout query: nothing moved yet
  CHECK(r.route().asking);
  CHECK(h.core->node_of(high_key) == 1);
  // The importing node sends it back (the migration ended the other way): no ASKING for the next hop.
  h.redirect(2, r, "MOVED " + slot + " 127.0.0.1:7001");
  CHECK(h.actions() == "ask 1 shards, send r>1");
  CHECK_FALSE(r.route().asking);
  // A new request for the slot goes to the owner again, without ASKING.
  test_request next("next", high_key);
  h.submit(next);
  CHECK(h.actions() == "send next>1");
  CHECK_FALSE(next.route().asking);

  SUBCASE("an ASK target that is down: the request waits, and forgets the ASK") {
    h.redirect(1, next, "ASK " + slot + " 127.0.0.1:7002");
    REQUIRE(h.actions() == "send next>2");
    detail::request_queue none;
    h.core->node_down(2, none, false, false, h.now);
    CHECK(h.actions().empty());  // the layout is being asked of node 1 already
    h.redirect(1, next, "ASK " + slot + " 127.0.0.1:7002");
    CHECK(h.actions() == "tick 100ms");
    CHECK_FALSE(next.route().asking);
    CHECK(next.route().redirects == 0);
  }
  SUBCASE("a resubmitted request starts without ASKING") {
    h.redirect(1, next, "ASK " + slot + " 127.0.0.1:7002");
    REQUIRE(next.route().asking);
    h.submit(next);
    CHECK(h.actions() == "send next>2, send next>1");
    CHECK_FALSE(next.route().asking);
    CHECK(next.route().redirects == 0);
  }
}

TEST_CASE("cluster routing: redirections that go round in a loop back off, and end as redirect_loop") {
  harness h;
  learn_two_masters(h);
  test_request r("r", low_key);
  h.submit(r);
  REQUIRE(h.actions() == "send r>0");
  const auto slot = std::to_string(detail::key_slot(low_key));
  const std::string to_0 = "MOVED " + slot + " 127.0.0.1:7000", to_1 = "MOVED " + slot + " 127.0.0.1:7001";
  // The nodes disagree (each resend is answered before the layout query): followed max_redirects times.
  h.redirect(0, r, to_1);
  CHECK(h.actions() == "ask 1 shards, send r>1");
  for (int i = 2; i <= routing::max_redirects; ++i) {
    const bool odd = i % 2 == 1;
    h.redirect(odd ? 0 : 1, r, odd ? to_1 : to_0);
    CHECK(h.actions() == (odd ? "send r>1" : "send r>0"));
    CHECK(r.route().redirects == i);
  }
  CHECK_FALSE(r.route().redirect_looped);
  h.redirect(1, r, to_0);  // one too many: not resent now
  CHECK(h.actions() == "tick 100ms");
  CHECK(r.route().redirect_looped);
  CHECK(r.route().redirects == 0);
  CHECK(r.done == 0);
  const std::int64_t first_wait = h.now;
  CHECK(r.route().give_up_ns == first_wait + 3000 * ms);
  // The tick resends it, with a fresh count: the bound is on redirections without a pause.
  h.tick_after(100);
  CHECK(h.actions() == "send r>1");  // the slot's owner as the last MOVED that was followed said
  for (int i = 1; i <= routing::max_redirects; ++i) {
    h.redirect(1, r, to_0);
    CHECK(h.actions().find("send r>0") != std::string::npos);
  }
  h.redirect(0, r, to_1);
  CHECK(h.actions() == "tick 100ms");
  CHECK(r.route().give_up_ns == first_wait + 3000 * ms);  // the first wait's, not the last one's
  h.now = first_wait + 2999 * ms;
  h.core->tick(h.now);
  CHECK(h.actions() == "send r>0");  // nothing else waits: no tick armed
  h.redirect(0, r, "TRYAGAIN Multiple keys request during rehashing of slot");
  CHECK(h.actions() == "tick 100ms");  // the layout query to 1 is still unanswered: not asked again
  h.now = first_wait + 3000 * ms;
  h.core->tick(h.now);
  CHECK(h.actions() == "fail r: redirect_loop");
  CHECK(r.done == 1);
  CHECK(r.ec == errc::redirect_loop);
}

TEST_CASE("cluster routing: TRYAGAIN waits for the tick, not for the layout, and gives up as cluster_down") {
  harness h;
  learn_two_masters(h);
  test_request r("r", low_key);
  h.submit(r);
  REQUIRE(h.actions() == "send r>0");
  h.redirect(0, r, "TRYAGAIN Multiple keys request during rehashing of slot 5061");
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  h.layout(two_masters());
  CHECK(h.actions() == "layout from 0, replace");  // the same node would say the same at once
  h.tick_after(100);
  CHECK(h.actions() == "send r>0");
  h.redirect(0, r, "CLUSTERDOWN The cluster is down");
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  h.tick_after(3000);
  CHECK(h.actions() == "fail r: cluster_down");
  CHECK(r.ec == errc::cluster_down);
}

TEST_CASE("cluster routing: a lost layout reply: the next node is asked on the next tick") {
  harness h(settings(), {7000, 7001, 7002});
  CHECK(h.actions() == "mode classic, open 0 127.0.0.1:7000, open 1 127.0.0.1:7001, open 2 127.0.0.1:7002");
  test_request r("r", high_key);
  h.submit(r);
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  h.tick_after(100);  // no answer yet: one query at a time
  CHECK(h.actions() == "tick 100ms");
  h.core->layout_answered(errc::timed_out, reply{}, h.now);  // the connection gave up on it
  CHECK(h.actions().empty());
  h.tick_after(100);
  CHECK(h.actions() == "ask 1 shards, tick 100ms");
  h.core->layout_answered(errc::timed_out, reply{}, h.now);
  h.tick_after(100);
  CHECK(h.actions() == "ask 2 shards, tick 100ms");
  h.layout(shards_reply({{0, 16383, 7001}}));
  CHECK(h.actions() == "layout from 2, replace, send r>1");
}

TEST_CASE("cluster routing: a request that waits gives up at command_timeout after its first wait") {
  SUBCASE("no node answers: an outage (not_connected)") {
    harness h(settings(), {7000, 7001});
    h.actions();
    test_request r("r", low_key);
    h.submit(r);
    CHECK(h.actions() == "ask 0 shards, tick 100ms");
    const std::error_code refused = std::make_error_code(std::errc::connection_refused);
    for (int t = 100; t < 3000; t += 100) {
      if (t % 1000 == 100) h.core->layout_answered(refused, reply{}, h.now);
      h.tick_after(100);
      const std::string actions = h.actions();
      CHECK(actions.find("tick 100ms") != std::string::npos);
      CHECK(r.done == 0);
    }
    h.tick_after(99);
    CHECK(r.done == 0);
    h.actions();
    h.tick_after(1);
    CHECK(h.actions().find("fail r: not_connected") == 0);
    CHECK(r.ec == errc::not_connected);
  }
  SUBCASE("the layout names no master for the slot: cluster_down") {
    harness h;
    h.actions();
    test_request r("r", high_key);
    h.submit(r);
    h.actions();
    h.layout(shards_reply({{0, 8191, 7000}}));
    CHECK(h.actions() == "layout from 0, replace");
    h.tick_after(3000);
    CHECK(h.actions() == "fail r: cluster_down");
  }
  SUBCASE("its master's connection is down: not_connected") {
    harness h;
    learn_two_masters(h);
    test_request r("r", high_key);
    h.submit(r);
    REQUIRE(h.actions() == "send r>1");
    detail::request_queue unsent;
    unsent.push_back(r);  // not written when the connection dropped
    h.core->node_down(1, unsent, false, false, h.now);
    CHECK(h.actions() == "ask 0 shards, tick 100ms");
    h.layout(two_masters());
    CHECK(h.actions() == "layout from 0, replace");  // still node 1's slot: waits for it
    h.tick_after(3000);
    CHECK(h.actions() == "fail r: not_connected");
  }
}

TEST_CASE("cluster routing: a layout that frees nothing is read again on the next tick, not at once") {
  // During a failover the layout names no master for the failed one's slots (CLUSTER SHARDS marks it
  // "failed"), or names a master whose connection is down: the requests for those slots wait.
  harness h;
  learn_two_masters(h);
  test_request r("r", high_key);
  h.submit(r);
  REQUIRE(h.actions() == "send r>1");
  detail::request_queue unsent;
  unsent.push_back(r);
  h.core->node_down(1, unsent, false, false, h.now);
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  int layout_reads = 0;
  for (int t = 0; t < 5; ++t) {
    // Node 0's answer: its failed peer serves nothing; the other half of the slots has no master.
    h.layout(shards_reply({{0, 8191, 7000}}));
    std::string actions = h.actions();
    CHECK(actions == "layout from 0, replace");  // no second query before the tick
    h.tick_after(100);
    actions = h.actions();
    CHECK(actions == "ask 0 shards, tick 100ms");
    ++layout_reads;
  }
  CHECK(layout_reads == 5);
  CHECK(r.done == 0);
  // The replica took over: the next answer names it, and the request goes there.
  h.layout(shards_reply({{0, 8191, 7000}, {8192, 16383, 7004}}));
  CHECK(h.actions() == "open 2 127.0.0.1:7004, layout from 0, replace, send r>2");
}

TEST_CASE("cluster routing: every node down, then one back") {
  harness h;
  learn_two_masters(h);
  test_request a("a", low_key), b("b", high_key);
  h.submit(a);
  h.submit(b);
  REQUIRE(h.actions() == "send a>0, send b>1");
  detail::request_queue unsent;
  unsent.push_back(a);
  h.core->node_down(0, unsent, false, false, h.now);
  CHECK(h.actions() == "ask 1 shards, tick 100ms");  // a node that is up
  CHECK(h.core->down(0));
  unsent.push_back(b);
  h.core->node_down(1, unsent, true, false, h.now);  // the layout query was queued there, unsent
  CHECK(h.actions() == "ask 0 shards");              // none is up: asked in turn anyway
  // Nothing goes to a node that is down, tick after tick.
  h.tick_after(100);
  CHECK(h.actions() == "tick 100ms");
  h.core->node_up(1);
  CHECK(h.actions().empty());
  h.tick_after(100);
  CHECK(h.actions() == "send b>1, tick 100ms");
  CHECK(a.done == 0);
  h.core->node_up(0);
  h.tick_after(100);
  CHECK(h.actions() == "send a>0");
  CHECK_FALSE(h.core->anything_waits());
}

TEST_CASE("cluster routing: a full node table") {
  SUBCASE("a layout with more masters than places: what waits fails with node_table_full") {
    harness h(settings(2));
    h.actions();
    test_request a("a", low_key), b("b", high_key);
    h.submit(a);
    h.submit(b);
    h.actions();
    h.usage.in_use[0] = true;  // the seed has a request in flight
    h.layout(shards_reply({{0, 5000, 7001}, {5001, 10000, 7002}, {10001, 16383, 7003}}));
    CHECK(h.actions() == "open 1 127.0.0.1:7001, fail a b: node_table_full");
    CHECK(a.ec == errc::node_table_full);
    CHECK(b.ec == errc::node_table_full);
    CHECK_FALSE(h.core->layout_known());
  }
  SUBCASE("a node nothing uses and the layout no longer names makes room") {
    harness h(settings(2));
    h.actions();
    test_request a("a", low_key);
    h.submit(a);
    h.actions();
    // The seed is a replica: 7001 and 7002 are the masters.
    h.layout(shards_reply({{0, 8191, 7001}, {8192, 16383, 7002}}));
    CHECK(h.actions() == "open 1 127.0.0.1:7001, open 0 127.0.0.1:7002, layout from 0, replace, send a>1");
    CHECK(h.core->node_count() == 2);
    CHECK(h.core->address(0).port == 7002);
  }
  SUBCASE("a redirection to one node too many fails that request only") {
    harness h(settings(2));
    learn_two_masters(h);
    test_request r("r", low_key), other("other", high_key);
    h.submit(r);
    h.submit(other);
    REQUIRE(h.actions() == "send r>0, send other>1");
    h.redirect(0, r, "ASK " + std::to_string(detail::key_slot(low_key)) + " 127.0.0.1:7009");
    CHECK(h.actions() == "fail r: node_table_full");  // both places serve slots
    CHECK(r.ec == errc::node_table_full);
    CHECK(other.done == 0);
  }
}

TEST_CASE("cluster routing: every seed refusing the layout fails what waits at once") {
  harness h(settings(), {7000, 7001});
  h.actions();
  test_request a("a", low_key);
  h.submit(a);
  CHECK(h.actions() == "ask 0 shards, tick 100ms");
  h.layout(error_reply("NOPERM User locker has no permissions to run the 'cluster|shards' command"));
  CHECK(h.actions().empty());  // one seed said no: the other may say yes
  CHECK(a.done == 0);
  h.tick_after(100);
  CHECK(h.actions() == "ask 1 shards, tick 100ms");
  h.layout(error_reply("NOPERM User locker has no permissions to run the 'cluster|shards' command"));
  CHECK(h.actions() ==
        "no_layout (NOPERM User locker has no permissions to run the 'cluster|shards' command), "
        "fail a: permission_denied");
  CHECK(a.ec == errc::permission_denied);
  // Asked again for the next request.
  test_request b("b", low_key);
  h.submit(b);
  CHECK(h.actions() == "ask 0 shards");
}

TEST_CASE("cluster routing: automatic pub/sub waits for the probe, pipelined with the first layout") {
  const auto automatic = detail::cluster_routing_settings::pubsub::automatic;
  SUBCASE("answered: sharded; requests go once both the layout and the mode are known") {
    harness h(settings(4, automatic));
    CHECK(h.actions() == "open 0 127.0.0.1:7000");
    test_request a("a", low_key);
    h.submit(a);
    CHECK(h.actions() == "probe 0 1000ms, ask 0 shards, tick 100ms");
    CHECK(h.core->pubsub_mode() == routing::pubsub::unknown);
    h.layout(two_masters());
    CHECK(h.actions() == "open 1 127.0.0.1:7001, layout from 0, replace");  // the mode is still unknown
    h.core->probe_answered({}, false, {}, h.now);
    CHECK(h.actions() == "cancel_probe, mode sharded, replace, send a>0");
  }
  SUBCASE("refused (before Redis 7, or an ACL): classic") {
    harness h(settings(4, automatic));
    h.actions();
    test_request a("a", low_key);
    h.submit(a);
    h.actions();
    h.core->probe_answered({}, true, "ERR unknown subcommand 'SHARDNUMSUB'", h.now);
    CHECK(h.actions() == "cancel_probe, mode classic");  // no layout yet: nothing goes
    h.layout(two_masters());
    CHECK(h.actions() == "open 1 127.0.0.1:7001, layout from 0, replace, send a>0");
  }
  SUBCASE("busy (LOADING): asked again with the next layout") {
    harness h(settings(4, automatic));
    h.actions();
    test_request a("a", low_key);
    h.submit(a);
    h.actions();
    h.core->probe_answered({}, true, "LOADING Redis is loading the dataset in memory", h.now);
    CHECK(h.actions() == "cancel_probe");
    CHECK(h.core->pubsub_mode() == routing::pubsub::unknown);
    h.layout(two_masters());
    h.actions();
    h.tick_after(100);
    CHECK(h.actions() == "probe 0 1000ms, ask 0 shards, tick 100ms");
  }
  SUBCASE("unanswered: another node is asked; unanswered twice: classic") {
    harness h(settings(4, automatic), {7000, 7001});
    h.actions();
    test_request a("a", low_key);
    h.submit(a);
    CHECK(h.actions() == "probe 0 1000ms, ask 0 shards, tick 100ms");
    h.core->probe_timer_fired(1, h.now + 1000 * ms);
    CHECK(h.actions() == "probe_unanswered 0 again, drop 0: timed_out");
    // The drop fails what was written there: the probe, the layout query.
    h.core->probe_answered(errc::outcome_unknown, false, {}, h.now);
    h.core->layout_answered(errc::outcome_unknown, reply{}, h.now);
    detail::request_queue none;
    h.core->node_down(0, none, false, false, h.now);
    CHECK(h.actions() == "cancel_probe, probe 1 1000ms, ask 1 shards");
    h.core->probe_timer_fired(1, h.now);  // the first probe's timer: stale
    CHECK(h.actions().empty());
    h.core->probe_timer_fired(2, h.now + 1000 * ms);
    CHECK(h.actions() == "probe_unanswered 1 decided, mode classic, drop 1: timed_out");
    CHECK(h.core->pubsub_mode() == routing::pubsub::classic);
    h.core->layout_answered(errc::outcome_unknown, reply{}, h.now);
    h.core->node_down(1, none, false, false, h.now);
    CHECK(h.actions() == "ask 0 shards");  // the layout still, the probe no more
    h.core->node_up(0);
    h.layout(two_masters());
    CHECK(h.actions() == "layout from 0, replace, send a>0");
  }
  SUBCASE("unanswered after the layout came: what waits is routed after the drop, not behind it") {
    harness h(settings(4, automatic));
    h.actions();
    test_request a("a", high_key);
    h.submit(a);
    h.actions();
    h.layout(two_masters());
    CHECK(h.actions() == "open 1 127.0.0.1:7001, layout from 0, replace");
    h.core->probe_timer_fired(1, h.now + 1000 * ms);
    CHECK(h.actions() == "probe_unanswered 0 again, drop 0: timed_out");
    h.core->probe_answered(errc::outcome_unknown, false, {}, h.now);  // written: failed by the drop
    detail::request_queue none;
    h.core->node_down(0, none, false, false, h.now);
    CHECK(h.actions() == "cancel_probe, probe 1 1000ms, ask 1 shards");
    h.core->probe_timer_fired(2, h.now + 1000 * ms);
    std::vector<std::string> done;
    auto a1 = h.core->next();
    done.push_back(carry_out(*h.core, a1));
    auto a2 = h.core->next();
    done.push_back(carry_out(*h.core, a2));
    auto a3 = h.core->next();
    done.push_back(carry_out(*h.core, a3));
    CHECK(done == std::vector<std::string>{"probe_unanswered 1 decided", "mode classic", "drop 1: timed_out"});
    // While the drop is carried out, the connection fails what it had written and reports its node down.
    h.core->probe_answered(errc::outcome_unknown, false, {}, h.now);
    h.core->layout_answered(errc::outcome_unknown, reply{}, h.now);
    h.core->node_down(1, none, false, false, h.now);
    const std::string after = h.actions();
    CHECK(after.find("replace") == 0);
    CHECK(after.find("send a") == std::string::npos);  // node 1 is down now: a waits for it
    CHECK(a.done == 0);
    h.core->node_up(1);
    h.tick_after(100);
    CHECK(h.actions().find("send a>1") == 0);
  }
}

TEST_CASE("cluster routing: refused subscriptions read the layout again") {
  harness h;
  learn_two_masters(h);
  CHECK_FALSE(h.core->subscription_refused("NOPERM no", detail::server_address{}));
  CHECK(h.core->subscription_refused("MOVED 12182 127.0.0.1:7002", node_at(7001)));
  CHECK(h.actions() == "open 2 127.0.0.1:7002, ask 2 shards");
  h.layout(shards_reply({{0, 8191, 7000}, {8192, 16383, 7002}}));
  CHECK(h.actions() == "layout from 2, replace");
  CHECK(h.core->channel_master(high_key)->port == 7002);
  CHECK(h.core->subscription_refused("CLUSTERDOWN The cluster is down", node_at(7002)));
  CHECK(h.actions() == "tick 100ms");
  h.tick_after(100);
  CHECK(h.actions() == "ask 2 shards");  // nothing waits: no new tick
}

TEST_CASE("cluster routing: names whose keys span slots are refused; closing fails what waits") {
  harness h;
  h.actions();
  test_request bad("bad", "a}b");
  h.submit(bad);
  CHECK(h.actions() == "refuse bad: cross_slot");
  test_request a("a", low_key), b("b", high_key);
  h.submit(a);
  h.submit(b);
  h.actions();
  h.core->close();
  CHECK(h.actions() == "fail a b: shutting_down");
  test_request late("late", low_key);
  h.submit(late);
  CHECK(h.actions() == "refuse late: shutting_down");
  h.tick_after(100);
  h.layout(two_masters());
  CHECK(h.actions().empty());
}

TEST_CASE("cluster routing: closed while a tick's requests are decided: the rest fail, none is left waiting") {
  harness h;
  learn_two_masters(h);
  test_request a("a", high_key), b("b", high_key);
  h.submit(a);
  h.submit(b);
  REQUIRE(h.actions() == "send a>1, send b>1");
  detail::request_queue unsent;
  unsent.push_back(a);
  unsent.push_back(b);
  h.core->node_down(1, unsent, false, false, h.now);
  h.actions();
  h.tick_after(3000);
  auto first = h.core->next();
  CHECK(carry_out(*h.core, first) == "fail a: not_connected");
  h.core->close();  // from a's completion, say
  CHECK(h.actions() == "fail b: shutting_down");
  CHECK(b.ec == errc::shutting_down);
  CHECK_FALSE(h.core->anything_waits());
}

}  // namespace cluster_routing_suite
