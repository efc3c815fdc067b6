// Where a cluster client's channels are subscribed (src/cluster/shard_placement.hpp), without sockets:
// a scripted router says the pub/sub mode and each channel's master; a real subscriber, whose event
// loop never runs, opens and closes the links (a link connects only when a channel is subscribed on
// it, which these tests never do). The live side (SSUBSCRIBE on real masters, migrations, failovers)
// is cluster_pubsub_test and cluster_failover_test.
#include <doctest/doctest.h>

#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/shard_placement.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pubsub/subscriber.hpp"

// Its own namespace: the core tests are built as one unit (unity build).
namespace shard_placement_suite {

namespace detail = deadbolt::detail;
using detail::classic_link;
using detail::link_id;
using detail::no_link;
using pubsub = detail::cluster_routing::pubsub;

namespace {

detail::server_address master(std::uint16_t port) {
  detail::server_address a;
  a.host = "127.0.0.1";
  a.numeric = true;
  a.port = port;
  return a;
}

// The cluster's answers, scripted; what the placement told it, recorded.
struct scripted_router final : detail::channel_router {
  pubsub pubsub_mode() const override { return mode; }
  const detail::server_address* channel_master(std::string_view channel) const override {
    auto it = masters.find(std::string(channel));
    return it == masters.end() ? nullptr : &it->second;
  }
  void layout_stale() override { ++stale; }
  bool subscription_refused(std::string_view error_text, const detail::server_address& from) override {
    refusals.push_back(std::string(error_text) + " from " + std::to_string(from.port));
    return redirection;
  }

  pubsub mode = pubsub::unknown;
  std::map<std::string, detail::server_address> masters;
  int stale = 0;
  std::vector<std::string> refusals;
  bool redirection = true;
};

// A subscriber with a placement, as cluster_topology makes it, on a loop that never runs.
struct fixture {
  explicit fixture(std::size_t max_links = 4) : placement(router, max_links) {
    cfg.max_cluster_nodes = max_links;
    deadbolt::endpoint ep;
    subs = std::make_shared<detail::subscriber>(
        io.get_executor(), ep,
        std::make_unique<detail::static_addresses>(std::vector<detail::server_address>{master(7000)}), cfg,
        &placement);
  }
  ~fixture() { subs->stop(); }

  link_id home(std::string_view channel) { return placement.home_of(*subs, channel); }

  asio::io_context io;
  deadbolt::config cfg;
  scripted_router router;
  detail::shard_placement placement;
  std::shared_ptr<detail::subscriber> subs;
};

}  // namespace

TEST_CASE("shard placement: nowhere until the pub/sub mode is known, then classic pub/sub on the classic link") {
  fixture f;
  f.router.masters["a"] = master(7001);
  CHECK(f.home("a") == no_link);
  f.router.mode = pubsub::classic;
  CHECK(f.home("a") == classic_link);
  CHECK(f.placement.links() == 0);
}

TEST_CASE("shard placement: one link per master, shared by its channels; nowhere while a slot has no master") {
  fixture f;
  f.router.mode = pubsub::sharded;
  f.router.masters["a"] = master(7001);
  f.router.masters["b"] = master(7001);
  f.router.masters["c"] = master(7002);
  const link_id a = f.home("a");
  CHECK(a != no_link);
  CHECK(a != classic_link);
  CHECK(f.home("b") == a);
  const link_id c = f.home("c");
  CHECK(c != no_link);
  CHECK(c != classic_link);
  CHECK(c != a);
  CHECK(f.home("d") == no_link);
  CHECK(f.placement.links() == 2);
  CHECK(f.home("a") == a);  // asked again (replace()): the same link
  CHECK(f.placement.links() == 2);
}

TEST_CASE("shard placement: with the link table full, a channel of one more master waits unplaced") {
  fixture f(1);
  f.router.mode = pubsub::sharded;
  f.router.masters["a"] = master(7001);
  f.router.masters["c"] = master(7002);
  CHECK(f.home("a") != no_link);
  CHECK(f.home("c") == no_link);
  CHECK(f.placement.links() == 1);
}

TEST_CASE("shard placement: a refusal reaches the router with the master of its link; doubt reads the layout again") {
  fixture f;
  f.router.mode = pubsub::sharded;
  f.router.masters["a"] = master(7001);
  f.router.masters["c"] = master(7002);
  f.home("a");
  const link_id c = f.home("c");
  CHECK(f.placement.refused(c, "MOVED 7365 127.0.0.1:7001"));
  f.router.redirection = false;
  CHECK_FALSE(f.placement.refused(c, "NOPERM no permissions to access a channel"));
  CHECK_FALSE(f.placement.refused(classic_link, "NOPERM no permissions to access a channel"));  // not its link
  CHECK(f.router.refusals == std::vector<std::string>{"MOVED 7365 127.0.0.1:7001 from 7002",
                                                      "NOPERM no permissions to access a channel from 7002"});
  f.placement.link_in_doubt(c);
  CHECK(f.router.stale == 1);
}

TEST_CASE("shard placement: links no channel is on are closed and forgotten; the next channel opens one again") {
  fixture f;
  f.router.mode = pubsub::sharded;
  f.router.masters["a"] = master(7001);
  f.router.masters["c"] = master(7002);
  const link_id a = f.home("a");
  f.home("c");
  CHECK(f.subs->channels_on(a) == 0);
  f.placement.close_idle_links(*f.subs);
  CHECK(f.placement.links() == 0);
  CHECK_FALSE(f.subs->close_link(a));  // closed already
  CHECK_FALSE(f.subs->close_link(classic_link));  // never closed
  CHECK(f.home("a") != no_link);
  CHECK(f.placement.links() == 1);
}

}  // namespace shard_placement_suite
