// How the watchdog's batches are written (src/lock/renewal.cpp), without a server: which holds share
// a script call, how many fit, and the exact command. Which batch goes out when
// (src/engine/renewal_windows.hpp), and which keys a topology lets share a script call.
#include <doctest/doctest.h>

#include <memory>
#include <string>
#include <vector>

#include "base/key_slot.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "engine/holds.hpp"
#include "engine/renewal_script.hpp"
#include "engine/renewal_windows.hpp"
#include "engine/topology.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/request.hpp"
#include "scripts.hpp"

namespace detail = deadbolt::detail;
using detail::hold_field;

namespace {
struct noop_request final : detail::request {
  void encode(deadbolt::resp::encoder&) override {}
  void on_node(const deadbolt::resp::node&) override {}
  void on_done(std::error_code) override {}
};

detail::hold make_hold(const char* name, std::int64_t owner, hold_field field) {
  detail::hold h;
  h.name = name;
  h.owner = owner;
  h.field = field;
  return h;
}
}  // namespace

TEST_CASE("renewal kinds and batch sizes") {
  CHECK(detail::renewal_kind(hold_field::plain) == hold_field::plain);
  CHECK(detail::renewal_kind(hold_field::write) == hold_field::plain);  // lua/lock_renew.lua renews both
  CHECK(detail::renewal_kind(hold_field::read) == hold_field::read);
  CHECK(detail::renewal_batch_limit(hold_field::plain, 100) == 100);
  CHECK(detail::renewal_batch_limit(hold_field::read, 100) == 50);  // two keys per read hold
}

TEST_CASE("a batch of plain and write holds is one EVALSHA of lock_renew") {
  const auto a = make_hold("a", 1, hold_field::plain);
  const auto b = make_hold("{b}", 2, hold_field::write);
  const detail::hold* holds[] = {&a, &b};
  std::string out;
  deadbolt::resp::encoder e(out);
  noop_request r;
  detail::encode_renewal(e, r, hold_field::plain, holds, 2, "30000", "uuid");
  const std::string sha(detail::scripts::lock_renew.sha1);
  CHECK(out == "*8\r\n$7\r\nEVALSHA\r\n$40\r\n" + sha + "\r\n$1\r\n2\r\n$1\r\na\r\n$3\r\n{b}\r\n$5\r\n30000\r\n" +
                   "$6\r\nuuid:1\r\n$12\r\nuuid:2:write\r\n");
  CHECK(r.runs_script);
}

TEST_CASE("a batch of read holds names each hash and its timeout-key prefix") {
  const auto a = make_hold("a", 1, hold_field::read);
  const detail::hold* holds[] = {&a};
  std::string out;
  deadbolt::resp::encoder e(out);
  noop_request r;
  detail::encode_renewal(e, r, hold_field::read, holds, 1, "30000", "uuid");
  CHECK(out.find("$1\r\na\r\n$25\r\n{a}:uuid:1:rwlock_timeout\r\n$5\r\n30000\r\n$6\r\nuuid:1\r\n") != std::string::npos);
}

namespace {
// Batches for renewal_windows: only their identity matters.
std::vector<std::unique_ptr<noop_request>> make_batches(int n) {
  std::vector<std::unique_ptr<noop_request>> out;
  for (int i = 0; i < n; ++i) out.push_back(std::make_unique<noop_request>());
  return out;
}
}  // namespace

TEST_CASE("renewal windows: a node whose batches never complete holds back no other node") {
  detail::renewal_windows windows(3, 4);
  auto down = make_batches(24);
  auto up = make_batches(1);
  for (auto& b : down) windows.push(0, *b);  // built first: a shard that stopped answering
  windows.push(1, *up[0]);
  for (int i = 0; i < 4; ++i) {
    CHECK(windows.take(0) == down[static_cast<std::size_t>(i)].get());
    windows.sent(0);
  }
  CHECK(windows.take(0) == nullptr);  // its window is full until a batch completes (command_timeout)
  CHECK(windows.in_flight(0) == 4);
  CHECK(windows.take(1) == up[0].get());  // the healthy node's batch goes out at once
  windows.sent(1);
  windows.done(1);
  CHECK(windows.in_flight(1) == 0);
  windows.done(0);
  CHECK(windows.take(0) == down[4].get());  // one place free: the next in line
}

TEST_CASE("renewal windows: a node's batches go out in the order they were built, across runs") {
  detail::renewal_windows windows(1, 1);
  auto first_run = make_batches(3);
  auto second_run = make_batches(2);
  for (auto& b : first_run) windows.push(0, *b);
  CHECK(windows.take(0) == first_run[0].get());
  windows.sent(0);
  // The next run queues behind what the last one left waiting: nothing it built is passed over.
  for (auto& b : second_run) windows.push(0, *b);
  const detail::request* order[] = {first_run[1].get(), first_run[2].get(), second_run[0].get(), second_run[1].get()};
  for (const detail::request* expected : order) {
    CHECK(windows.take(0) == nullptr);  // the one in flight has not completed
    windows.done(0);
    CHECK(windows.take(0) == expected);
    windows.sent(0);
  }
}

TEST_CASE("renewal windows: a dropped batch takes no place; unknown nodes share the last window") {
  detail::renewal_windows windows(2, 1);
  auto batches = make_batches(3);
  windows.push(0, *batches[0]);
  windows.push(0, *batches[1]);
  CHECK(windows.take(0) == batches[0].get());  // not sent (nothing left in it to renew): no sent()
  CHECK(windows.take(0) == batches[1].get());
  windows.sent(0);
  windows.push(7, *batches[2]);  // beyond the table: the last window
  CHECK(windows.nodes() == 2);
  CHECK(windows.take(1) == batches[2].get());
  windows.sent(7);
  CHECK(windows.in_flight(1) == 1);
  windows.done(0);
  windows.done(0);  // more completions than sends never go below zero
  CHECK(windows.in_flight(0) == 0);
}

TEST_CASE("renewal windows: every waiting batch can be taken back, whatever its window") {
  detail::renewal_windows windows(2, 1);
  auto batches = make_batches(3);
  windows.push(0, *batches[0]);
  windows.push(1, *batches[1]);
  windows.push(1, *batches[2]);
  CHECK(windows.take(1) == batches[1].get());
  windows.sent(1);  // in flight: not waiting any more
  int taken = 0;
  while (windows.take_any_waiting() != nullptr) ++taken;
  CHECK(taken == 2);
  CHECK(windows.take(0) == nullptr);
}

TEST_CASE("a single server's renewals mix slots until the server refuses that, then go slot by slot") {
  asio::io_context io;
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:1";
  deadbolt::endpoint ep;
  REQUIRE_FALSE(cfg.validate(ep));
  auto topology = detail::make_topology(io.get_executor(), ep, cfg);
  REQUIRE(detail::key_slot("a") != detail::key_slot("b"));
  CHECK(topology->route_of("a") == topology->route_of("b"));  // a plain server: 100 names per script
  CHECK(topology->node_of("a") == 0);
  CHECK(topology->cross_slot_refused());  // a cluster node, proxy or managed service behind redis://
  CHECK(topology->route_of("a") == detail::key_slot("a"));
  CHECK(topology->route_of("b") == detail::key_slot("b"));
  CHECK(topology->route_of("{a}:x") == topology->route_of("a"));
  CHECK(topology->node_of("a") == 0);
  CHECK_FALSE(topology->cross_slot_refused());  // learned once: a later refusal changes nothing
  topology->close();
}

#if DEADBOLT_TEST_CLUSTER
TEST_CASE("a cluster's renewals go per slot; keys no node serves yet share one extra window") {
  asio::io_context io;
  deadbolt::config cfg;
  cfg.url = "redis+cluster://127.0.0.1:1/";
  cfg.max_cluster_nodes = 5;
  deadbolt::endpoint ep;
  REQUIRE_FALSE(cfg.validate(ep));
  auto topology = detail::make_topology(io.get_executor(), ep, cfg);
  CHECK(topology->route_of("a") == detail::key_slot("a"));
  CHECK(topology->node_of("a") == 5);  // no layout yet
  CHECK_FALSE(topology->cross_slot_refused());  // routes are slots already
  topology->close();
}
#endif
