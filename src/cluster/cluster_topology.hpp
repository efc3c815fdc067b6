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
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/observer.hpp"
#include "base/key_slot.hpp"
#include "cluster/slot_map.hpp"
#include "engine/topology.hpp"
#include "pubsub/subscriber.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class cluster_topology final : public topology, private channel_router {
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
  static constexpr std::uint8_t max_redirects = 5;

  /// The node at `where`, added (or, in a full table, recycled) if it is new; null if the table is
  /// full of nodes in use.
  node* node_for(const server_address& where);
  node* recycle(const server_address& where);
  void connect(node& n);
  /// The node serving r's key (any node's slot 0 when it has none), or no_node.
  std::uint16_t owner_of(const request& r) const;
  void route(request& r);
  void send(node& n, request& r);
  /// Waits for a route: the layout, the pub/sub mode, or a master for the slot.
  void park(request& r);
  /// Waits for the next tick: the node said "not now" (TRYAGAIN, CLUSTERDOWN), or the redirections
  /// went round in a loop (nodes that disagree for a moment while a slot changes hands).
  void back_off(request& r);
  void start_waiting(request& r);
  void route_parked();
  bool anything_waits() const { return !parked_.empty() || !backing_off_.empty(); }
  /// A node's connection dropped: park what it had not written, and read the layout again.
  void node_lost(node& n);
  void arm_park_timer();
  void on_park_timer();
  void refresh();
  void layout_answered(std::error_code ec, const reply& answer, const node& from);
  void redirected(node& from, request& r, std::string_view error_text);
  void fail_parked(std::error_code ec);
  void pubsub_answered(std::error_code ec, bool sharded);
  /// Bounds the probe's answer (PUBSUB SHARDNUMSUB sent to `asked`) well within the requests' deadline.
  void arm_probe_timer(const node& asked);
  void probe_timed_out(node& asked, std::chrono::milliseconds bound);
  void set_pubsub(mode m);
  /// The mode is known: subscribe what waited for it, route what is parked.
  void pubsub_decided();

  // channel_router: where the subscriber puts sharded channels.
  mode pubsub_mode() const override { return pubsub_; }
  const server_address* channel_master(std::string_view channel) const override;
  void layout_stale() override { refresh(); }
  bool subscription_refused(std::string_view error_text, const server_address& from) override;

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  std::vector<server_address> seeds_;
  std::vector<std::unique_ptr<node>> nodes_;  // at most cfg.max_cluster_nodes; full: unused ones are recycled
  std::unique_ptr<slot_table> slots_;
  bool layout_known_ = false;
  std::unique_ptr<layout_query> layout_;
  std::unique_ptr<pubsub_query> pubsub_probe_;
  bool probing_ = false;
  mode pubsub_ = mode::unknown;  // requests are routed once it is known
  bool replace_due_ = false;     // a subscription was refused for now (CLUSTERDOWN): refresh on the next tick
  const node* layout_asked_ = nullptr;  // the node the layout query in flight went to
  bool refreshing_ = false;
  bool shards_supported_ = true;  // CLUSTER SHARDS (Redis 7+); CLUSTER SLOTS otherwise
  std::size_t refresh_turn_ = 0;  // which node the next refresh asks
  std::error_code last_refresh_error_;
  std::string logged_layout_;  // the layout last logged (only with a log hook at info)
  // Layout queries refused in a row (no CLUSTER command, an ACL without it, cluster support off): once
  // every seed has refused while no layout is known, waiting requests hear it at once.
  std::size_t layout_refusals_ = 0;
  request_queue parked_;       // waiting for a layout, the pub/sub mode or a slot's master
  request_queue backing_off_;  // told "not now", or redirected in a loop: resent on the next tick only
  asio::steady_timer park_timer_;
  bool park_timer_armed_ = false;
  asio::steady_timer probe_timer_;  // the pub/sub probe's answer is bounded
  std::uint64_t probes_sent_ = 0;   // which probe the timer is for
  int probe_timeouts_ = 0;          // in a row: the second decides classic
  observer observe_;
  std::shared_ptr<subscriber> subs_;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // timer handlers check it
  bool closed_ = false;
};

}  // namespace deadbolt::detail
