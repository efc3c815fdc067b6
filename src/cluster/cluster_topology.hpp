// Redis Cluster behind the topology interface: a request goes to the master that serves its key's
// slot (CRC16 of the hash tag); the layout comes from CLUSTER SHARDS (CLUSTER SLOTS before Redis 7),
// asked of the seeds and then of known nodes, and again after a MOVED or a lost node. Redirections
// are followed here, never seen by the operations: MOVED updates the slot and resends (the command
// did not run), ASK resends once with ASKING; TRYAGAIN, CLUSTERDOWN and redirections that go round
// in a loop wait a tick and retry, until config::command_timeout after the first wait
// (errc::cluster_down, errc::redirect_loop). One command connection per node, opened on first use; at
// most config::max_cluster_nodes nodes (errc::node_table_full). Pub/sub is sharded (SSUBSCRIBE on the
// master of the channel's slot, SPUBLISH in the scripts) or classic (one subscriber on the seeds: a
// classic message reaches every node), as config::cluster_pubsub says; `automatic` asks PUBSUB
// SHARDNUMSUB along with the first layout, as Redisson does, and requests wait for the answer (a third
// of command_timeout at most: then another node is asked, and no answer from that one either means
// classic, logged).
//
// Those decisions are cluster_routing's (src/cluster/cluster_routing.hpp, sans-I/O); this is its driver:
// it owns the node connections, the layout query, the pub/sub probe, two timers and the subscriber,
// feeds the routing what happened, and carries out the actions it answers. The subscriber's channels
// are placed by a shard_placement (src/cluster/shard_placement.hpp), which asks this topology where.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/observer.hpp"
#include "base/key_slot.hpp"
#include "cluster/cluster_routing.hpp"
#include "cluster/shard_placement.hpp"
#include "engine/topology.hpp"
#include "pubsub/subscriber.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class cluster_topology final : public topology, private channel_router, private cluster_node_usage {
 public:
  cluster_topology(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  ~cluster_topology() override;

  void submit(request& r) override;
  /// A slot: renewals are batched per slot (one script call may touch one slot only).
  std::uint32_t route_of(std::string_view key) const override { return key_slot(key); }
  /// The index of the slot's master, or max_cluster_nodes while no node serves the slot.
  std::uint32_t node_of(std::string_view key) const override;
  bool cross_slot_refused() override { return false; }  // routes are slots already
  subscriber& subscriber_for(std::string_view channel) override;
  subscriber* existing_subscriber(std::string_view) const override { return subs_.get(); }
  bool settled() const override;
  void stop_subscribers() override;
  void close() override;

 private:
  struct node;
  class layout_query;
  class pubsub_query;

  /// Carries out what the routing decided, until it has nothing more to do. Events that arrive while
  /// an action is carried out (a connection failing a request at once) queue their actions behind.
  void pump();
  void perform(cluster_routing::action& a);
  void open_node(std::uint16_t index);
  void send(node& n, request& r);
  void arm_tick(std::int64_t delay_ms);
  void arm_probe_timer(std::int64_t delay_ms, std::uint64_t probe);
  void log_layout(std::uint16_t from);
  /// Tells each node's connection the replicas the layout names for it (replica sync expects them).
  void name_replicas();
  const std::vector<server_address>& replicas_of(std::uint16_t index) const;
  /// A node's connection dropped (or could not be made): its unsent requests go back to the routing.
  void node_lost(node& n);

  // cluster_node_usage
  bool busy(std::uint16_t index) const override;

  // channel_router: the routing's answers for the shard placement.
  cluster_routing::pubsub pubsub_mode() const override { return routing_.pubsub_mode(); }
  const server_address* channel_master(std::string_view channel) const override {
    return routing_.channel_master(channel);
  }
  void layout_stale() override;
  bool subscription_refused(std::string_view error_text, const server_address& from) override;

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  std::vector<server_address> seeds_;
  std::vector<std::unique_ptr<node>> nodes_;  // as the routing's node table: index for index
  cluster_routing routing_;
  std::unique_ptr<layout_query> layout_;
  std::unique_ptr<pubsub_query> pubsub_probe_;
  asio::steady_timer tick_timer_;
  asio::steady_timer probe_timer_;  // the pub/sub probe's answer is bounded
  std::string logged_layout_;       // the layout last logged (only with a log hook at info)
  observer observe_;
  shard_placement placement_;  // the subscriber's: stopped (in close()) before this goes
  std::shared_ptr<subscriber> subs_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // timer handlers check it
  bool pumping_ = false;
};

}  // namespace deadbolt::detail
