// The decisions of a Redis Cluster client, without I/O: no Asio, no sockets, no clock (time comes in
// with the events). The cluster topology (src/cluster/cluster_topology.cpp) feeds it what happened (a
// request to route, a redirection, a layout answer, a node up or down, a probe's answer, a tick) and
// carries out the actions it answers; tests drive it directly (tests/core/cluster_routing_test.cpp).
// It owns:
//   routing    a request goes to the master of its key's slot; nothing is routed before the layout and
//              the pub/sub mode are known (the scripts publish with it), nor to a node whose connection
//              is down: such a request is parked.
//   redirects  MOVED updates the slot and resends there; ASK resends once, with ASKING, to the node
//              named; TRYAGAIN and CLUSTERDOWN wait for the next tick ("backing off"), and so do more
//              than max_redirects redirections without a pause (nodes that disagree: a loop).
//   waiting    a request that waits (parked or backing off) gets a give-up time, command_timeout after
//              its first wait; each tick routes what can go and fails what is past it (redirect_loop,
//              not_connected, cluster_down, or why no node told the layout).
//   the layout asked of one node at a time, in turn (skipping nodes that are down; after a MOVED, the new
//              owner), with CLUSTER SHARDS, or CLUSTER SLOTS after a server that has no SHARDS; when
//              a request parks, and on each tick while anything waits (not at once after an answer
//              that left requests waiting: the same answer would come back at once); when every seed
//              refuses it, what waits fails at once.
//   the nodes  a table of at most max_nodes; when full, a node the layout no longer names and that
//              nothing uses is recycled; else errc::node_table_full.
//   pub/sub    sharded, classic, or (automatic) asked with PUBSUB SHARDNUMSUB along with the first
//              layout, within a bound; two probes unanswered in a row decide classic. Channels are
//              placed by the layout (channel_master), and a refused subscription reads it again.
//
// Actions come out of next() one at a time. Requests released together (a layout answer, a tick) are
// decided one by one as next() reaches them, so each decision sees what the actions before it did (a
// node dropped while they were carried out). Events may arrive while the driver carries out an action.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/server_address.hpp"
#include "cluster/slot_map.hpp"
#include "deadbolt/reply.hpp"
#include "pipeline/request.hpp"

namespace deadbolt::detail {

struct cluster_routing_settings {
  /// The node table's capacity (config::max_cluster_nodes).
  std::size_t max_nodes = 16;
  /// How long a request waits for a route once it first waits (config::command_timeout).
  std::int64_t command_timeout_ms = 3000;
  enum class pubsub : std::uint8_t { automatic, classic, sharded };
  pubsub cluster_pubsub = pubsub::automatic;  ///< config::cluster_pubsub
};

/// What the driver knows and the core asks: whether a node's connection has requests queued or in
/// flight (it is then never recycled for another address).
class cluster_node_usage {
 public:
  virtual bool busy(std::uint16_t node) const = 0;

 protected:
  ~cluster_node_usage() = default;
};

class cluster_routing {
 public:
  static constexpr std::uint16_t no_node = slot_table::no_node;
  /// Redirections followed without a pause; more is a loop (backed off).
  static constexpr std::uint8_t max_redirects = 5;
  /// The tick: parked requests are routed again, the layout asked again.
  static constexpr std::int64_t tick_ms = 100;

  enum class pubsub : std::uint8_t { unknown, classic, sharded };

  struct action {
    enum class kind : std::uint8_t {
      none,              ///< nothing to do until the next event
      open_node,         ///< node `node` is (now) address(node): make its command connection, not
                         ///< started; a connection it had stops later (it may be answering now) and its
                         ///< news is no longer this node's
      send,              ///< submit `req` to node `node` (starting its connection on first use)
      fail,              ///< complete `req` with `error` now
      refuse,            ///< complete `req` with `error`, but not from inside the submit (post it)
      fail_all,          ///< complete each of `requests`, in order, with `error`
      ask_layout,        ///< send the layout query to `node`: CLUSTER SHARDS if `shards`, else CLUSTER
                         ///< SLOTS; then layout_answered() (or node_down() with layout_lost)
      probe_pubsub,      ///< send PUBSUB SHARDNUMSUB to `node` and arm the probe timer for `delay_ms`;
                         ///< then probe_answered(), and probe_timer_fired(`probe`)
      cancel_probe_timer,
      arm_tick,          ///< arm the tick timer for `delay_ms`; then tick()
      drop_node,         ///< drop `node`'s connection as stuck, with `error` (it reports node_down())
      pubsub_decided,    ///< the pub/sub mode is pubsub_mode() from now: the scripts publish with it
      replace_subscriptions,  ///< the layout or the mode changed: place the subscribed channels again
      layout_read,       ///< `node` told layout() (for the log)
      no_layout,         ///< every seed refused the layout, saying refusal() (for the log)
      probe_unanswered,  ///< `node` did not answer the probe within `delay_ms`; `decided`: classic
                         ///< pub/sub from now, else another node is asked (for the log)
    };
    kind what = kind::none;
    std::uint16_t node = no_node;
    request* req = nullptr;
    request_queue requests;
    std::error_code error;
    std::int64_t delay_ms = 0;
    std::uint64_t probe = 0;
    bool shards = false;
    bool decided = false;
  };

  /// The seeds are the first nodes (config::validate() bounds them by max_nodes). `usage` outlives
  /// the core.
  cluster_routing(const cluster_routing_settings& settings, const std::vector<server_address>& seeds,
                  const cluster_node_usage& usage);
  cluster_routing(const cluster_routing&) = delete;
  cluster_routing& operator=(const cluster_routing&) = delete;
  ~cluster_routing();

  // ---- events ----
  /// A new request (its route_key names the slot; empty: slot 0).
  void submit(request& r, std::int64_t now_ns);
  /// Node `from` answered `r` with a redirection or "not now" (MOVED, ASK, TRYAGAIN, CLUSTERDOWN).
  void redirected(std::uint16_t from, request& r, std::string_view error_text, std::int64_t now_ns);
  /// The node's connection is ready.
  void node_up(std::uint16_t node);
  /// The node's connection dropped or could not be made. `unsent`: the requests it had not written
  /// (taken); `layout_lost` / `probe_lost`: the layout query / the pub/sub probe were among them.
  void node_down(std::uint16_t node, request_queue& unsent, bool layout_lost, bool probe_lost, std::int64_t now_ns);
  /// The layout query's answer (or its failure, `ec`), from the node it was asked of.
  void layout_answered(std::error_code ec, const reply& answer, std::int64_t now_ns);
  /// The probe's answer: `ec` when it failed, else `error_reply` when the node answered with an error
  /// (`error_text`).
  void probe_answered(std::error_code ec, bool error_reply, std::string_view error_text, std::int64_t now_ns);
  void probe_timer_fired(std::uint64_t probe, std::int64_t now_ns);
  void tick(std::int64_t now_ns);
  /// A shard dropped a subscription, or a subscriber link was lost: read the layout again.
  void layout_stale();
  /// A shard refused a subscription with `error_text`. True if it was a redirection or "not now":
  /// the layout is read again (MOVED: from the node named) and replace_subscriptions follows.
  bool subscription_refused(std::string_view error_text, const server_address& from);
  /// For good: what waits fails with errc::shutting_down; new requests are refused with it.
  void close();

  /// The next thing to do (kind::none when there is nothing until the next event).
  action next();

  // ---- state ----
  pubsub pubsub_mode() const noexcept { return pubsub_; }
  bool layout_known() const noexcept { return layout_known_; }
  bool closed() const noexcept { return closed_; }
  /// Something is parked or backing off.
  bool anything_waits() const noexcept;
  std::size_t node_count() const noexcept { return nodes_.size(); }
  const server_address& address(std::uint16_t node) const { return nodes_[node].address; }
  bool down(std::uint16_t node) const { return nodes_[node].down; }
  /// The node serving `key`'s slot by the layout, or no_node (no layout yet, or no master for it).
  std::uint16_t node_of(std::string_view key) const noexcept;
  /// The master serving `channel`'s slot by the layout (whatever its connection's state), or null.
  const server_address* channel_master(std::string_view channel) const;
  /// The last layout read (layout_read).
  const std::vector<shard_owner>& layout() const noexcept { return layout_; }
  /// What the last seed said when it refused the layout (no_layout).
  std::string_view refusal() const noexcept { return refusal_; }

 private:
  struct node_entry {
    server_address address;
    bool down = false;  // its connection dropped and has not come back: route nothing there
  };

  /// The node at `where`, added (or, in a full table, recycled) if it is new; no_node if the table is
  /// full of nodes in use.
  std::uint16_t node_for(const server_address& where);
  std::uint16_t recycle(const server_address& where);
  std::uint16_t owner_of(const request& r) const;
  /// Sends `r` to its slot's master, or parks it. `released`: it waited, and was let go by a layout
  /// answer or the pub/sub mode.
  void route(request& r, bool released);
  void park(request& r);
  void back_off(request& r);
  void start_waiting(request& r);
  /// What `r` fails with when its wait ran out on a tick.
  std::error_code give_up_error(const request& r, std::uint16_t owner) const;
  void tick_one(request& r);
  void tick_done();
  void route_parked() { rerouting_.splice_back(parked_); }
  void arm_tick();
  void refresh();
  void set_pubsub(pubsub m);
  /// The pub/sub mode was decided: what waited for it goes (once the layout is known too).
  void mode_known();
  void fail_parked(std::error_code ec);
  void push(const action& a) { actions_.push_back(a); }

  cluster_routing_settings settings_;
  const cluster_node_usage& usage_;
  std::size_t seed_count_ = 0;
  std::vector<node_entry> nodes_;  // at most settings_.max_nodes
  std::unique_ptr<slot_table> slots_;
  std::vector<shard_owner> layout_;
  bool layout_known_ = false;
  bool refreshing_ = false;
  bool shards_supported_ = true;  // CLUSTER SHARDS (Redis 7+); CLUSTER SLOTS otherwise
  std::uint16_t layout_asked_ = no_node;  // the node the layout query in flight went to
  std::size_t refresh_turn_ = 0;          // which node the next refresh asks
  std::error_code last_refresh_error_;
  // Layout queries refused in a row (no CLUSTER command, an ACL without it, cluster support off): once
  // every seed has refused while no layout is known, waiting requests hear it at once.
  std::size_t layout_refusals_ = 0;
  std::string refusal_;
  pubsub pubsub_ = pubsub::unknown;  // requests are routed once it is known
  bool probing_ = false;
  std::uint16_t probe_node_ = no_node;
  std::uint64_t probes_sent_ = 0;  // which probe the timer is for
  int probe_timeouts_ = 0;         // in a row: the second decides classic
  bool replace_due_ = false;       // a subscription was refused for now (CLUSTERDOWN): refresh on the next tick
  bool tick_armed_ = false;
  bool closed_ = false;
  request_queue parked_;       // waiting for a layout, the pub/sub mode or a slot's master
  request_queue backing_off_;  // told "not now", or redirected in a loop: resent on the next tick only
  request_queue rerouting_;    // released (layout, mode): routed one by one by next()
  request_queue due_;          // a tick's: sent, parked again or failed one by one by next()
  bool tick_pending_ = false;  // due_ was filled: its end refreshes and re-arms
  std::int64_t now_ns_ = 0;    // of the last event
  std::int64_t tick_ns_ = 0;   // of the last tick
  std::vector<action> actions_;
  std::size_t taken_ = 0;
};

}  // namespace deadbolt::detail
