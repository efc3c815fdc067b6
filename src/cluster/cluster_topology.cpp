#include "cluster/cluster_topology.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "base/reply_builder.hpp"
#include "base/server_error.hpp"
#include "cluster/redirect.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "wire/address_source.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::chrono::milliseconds park_tick{100};  // retry of parked requests, refresh of the layout
// The channel PUBSUB SHARDNUMSUB asks about. The bare form (no channel) hangs on some managed
// services (Azure Managed Redis); any channel answers the same question. Read-only: it counts.
constexpr std::string_view probe_channel = "deadbolt:pubsub-probe";

server_address seed_address(const endpoint::seed& s) {
  endpoint one;
  one.host = s.host;
  one.port = s.port;
  return address_of(one);
}

}  // namespace

// One node: its command connection, and what it tells the topology (redirections, a lost connection).
struct cluster_topology::node final : redirect_handler, connection_listener {
  node(cluster_topology& owner, std::uint16_t index, server_address where)
      : owner(owner), index(index), address(std::move(where)) {}

  void on_redirect(request& r, std::string_view error_text) override { owner.redirected(*this, r, error_text); }
  void on_connected() override { down = false; }
  void on_disconnected(std::error_code) override { owner.node_lost(*this); }
  void on_connect_failed(std::error_code) override { owner.node_lost(*this); }

  cluster_topology& owner;
  std::uint16_t index;
  server_address address;
  std::shared_ptr<connection> commands;
  bool started = false;
  bool down = false;  // its connection dropped and has not come back: route nothing there
};

// CLUSTER SHARDS (or SLOTS), its whole reply kept as a tree.
class cluster_topology::layout_query final : public request {
 public:
  explicit layout_query(cluster_topology& owner) : owner_(owner) {}

  void prepare(bool shards, const node& asked) {
    shards_ = shards;
    asked_ = &asked;
    answer_.take();
  }
  void encode(resp::encoder& e) override { e.command("CLUSTER", shards_ ? "SHARDS" : "SLOTS"); }
  void on_node(const resp::node& n) override { answer_.add(n); }
  void on_done(std::error_code ec) override { owner_.layout_answered(ec, answer_.result(), *asked_); }

 private:
  cluster_topology& owner_;
  bool shards_ = true;
  const node* asked_ = nullptr;
  reply_builder answer_;
};

// PUBSUB SHARDNUMSUB <channel>: it works where sharded pub/sub does (Redis 7+), Redisson's test for AUTO.
class cluster_topology::pubsub_query final : public request {
 public:
  explicit pubsub_query(cluster_topology& owner) : owner_(owner) {}

  void prepare() { refused_ = busy_ = false; }
  void encode(resp::encoder& e) override { e.command("PUBSUB", "SHARDNUMSUB", probe_channel); }
  void on_node(const resp::node& n) override {
    if (n.depth != 0 || (n.type != resp::type::simple_error && n.type != resp::type::blob_error)) return;
    // Unknown subcommand (before Redis 7) or not allowed (an ACL user): classic, as Redisson decides.
    // Anything else (LOADING, ...) says nothing about the server: ask again.
    const server_error_kind kind = server_error_kind_of(n.value);
    const bool says_no = kind == server_error_kind::other || kind == server_error_kind::unknown_command ||
                         kind == server_error_kind::no_permission;
    (says_no ? refused_ : busy_) = true;
  }
  void on_done(std::error_code ec) override {
    owner_.pubsub_answered(ec ? ec : busy_ ? make_error_code(errc::server_error) : ec, !refused_);
  }

 private:
  cluster_topology& owner_;
  bool refused_ = false;
  bool busy_ = false;
};

cluster_topology::cluster_topology(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      slots_(std::make_unique<slot_table>()),
      layout_(std::make_unique<layout_query>(*this)),
      pubsub_probe_(std::make_unique<pubsub_query>(*this)),
      park_timer_(executor_),
      probe_timer_(executor_),
      observe_(cfg) {
  switch (cfg_.cluster_pubsub) {
    case pubsub_mode::automatic: pubsub_ = mode::unknown; break;
    case pubsub_mode::sharded: pubsub_ = mode::sharded; break;
    case pubsub_mode::classic: pubsub_ = mode::classic; break;
  }
  if (pubsub_ == mode::sharded) publish_ = "spublish";
  nodes_.reserve(cfg_.max_cluster_nodes);
  for (const auto& s : ep_.cluster_seeds) {
    seeds_.push_back(seed_address(s));
    node_for(seeds_.back());  // config::validate() bounds the seeds by max_cluster_nodes
  }
}

cluster_topology::~cluster_topology() { close(); }

cluster_topology::node* cluster_topology::node_for(const server_address& where) {
  for (auto& n : nodes_) {
    if (n->address == where) return n.get();
  }
  if (nodes_.size() >= cfg_.max_cluster_nodes) return recycle(where);
  nodes_.push_back(std::make_unique<node>(*this, static_cast<std::uint16_t>(nodes_.size()), where));
  connect(*nodes_.back());
  return nodes_.back().get();
}

void cluster_topology::connect(node& n) {
  n.commands = std::make_shared<connection>(executor_, ep_,
                                            std::make_unique<static_addresses>(std::vector<server_address>{n.address}),
                                            cfg_, connection::role::command);
  n.commands->set_redirect_handler(&n);
  n.commands->set_listener(&n);
  n.started = false;
  n.down = false;
}

cluster_topology::node* cluster_topology::recycle(const server_address& where) {
  // A full table takes the place of a node the layout no longer names (a replaced master, a seed
  // that is a replica) if nothing waits on it: a long-lived client whose cluster changes its nodes
  // does not run out of places.
  for (auto& n : nodes_) {
    if (n.get() == layout_asked_ || slots_->serves_any(n->index)) continue;
    if (n->started && !n->commands->idle()) continue;
    std::shared_ptr<connection> old = std::move(n->commands);
    old->set_listener(nullptr);  // the old connection's goodbye is not the new node's news
    old->set_redirect_handler(nullptr);
    // Closed later: this may run inside that connection's own reply routing (the layout it answered).
    asio::post(executor_, [old] { old->stop(); });
    n->address = where;
    connect(*n);
    return n.get();
  }
  return nullptr;
}

void cluster_topology::submit(request& r) {
  if (closed_) {
    asio::post(executor_, [&r] { r.on_done(errc::shutting_down); });
    return;
  }
  if (!name_fits_one_slot(r.route_key)) {  // its scripts would get CROSSSLOT: refuse before anything runs
    asio::post(executor_, [&r] { r.on_done(errc::cross_slot); });
    return;
  }
  r.asking = false;
  r.redirects = 0;
  r.redirect_looped = false;
  r.give_up_ns = 0;
  route(r);
}

std::uint16_t cluster_topology::owner_of(const request& r) const {
  // Nothing is routed before the pub/sub mode is known: the scripts publish with it.
  if (!layout_known_ || pubsub_ == mode::unknown) return slot_table::no_node;
  return slots_->node_of(r.route_key.empty() ? 0 : key_slot(r.route_key));
}

std::uint32_t cluster_topology::node_of(std::string_view key) const {
  const std::uint16_t index = layout_known_ ? slots_->node_of(key_slot(key)) : slot_table::no_node;
  return index == slot_table::no_node ? static_cast<std::uint32_t>(cfg_.max_cluster_nodes) : index;
}

void cluster_topology::route(request& r) {
  const std::uint16_t index = owner_of(r);
  if (index == slot_table::no_node || nodes_[index]->down) return park(r);
  send(*nodes_[index], r);
}

void cluster_topology::node_lost(node& n) {
  // A failover may have begun: what was not written yet waits for the layout to name the slot's new
  // master (what was written follows the connection's rules: an unanswered acquire is verified).
  if (closed_) return;
  n.down = true;
  request_queue unsent;
  n.commands->take_unsent(unsent);
  bool asked_for_layout = false;
  while (request* r = unsent.pop_front()) {
    if (r == layout_.get()) {
      asked_for_layout = true;  // the layout query was for this node: it failed, ask another
    } else if (r == pubsub_probe_.get()) {
      probing_ = false;  // asked again with the next layout
    } else {
      park(*r);
    }
  }
  if (asked_for_layout) layout_->on_done(errc::not_connected);
  refresh();
}

void cluster_topology::send(node& n, request& r) {
  if (!n.started) {
    n.started = true;
    n.commands->start();
  }
  n.commands->submit(r);
}

void cluster_topology::start_waiting(request& r) {
  if (r.give_up_ns == 0) {
    r.give_up_ns = port::monotonic_ns() + std::chrono::nanoseconds(cfg_.command_timeout).count();
  }
  // The redirections start again from the slot table: the bound is on redirections without a pause.
  r.redirects = 0;
  r.asking = false;
}

void cluster_topology::park(request& r) {
  start_waiting(r);
  parked_.push_back(r);
  refresh();
  arm_park_timer();
}

void cluster_topology::back_off(request& r) {
  // Not resent when the layout answers: the layout names the same node, which would answer the same
  // at once, again and again, until the migration or the failover ends.
  start_waiting(r);
  backing_off_.push_back(r);
  refresh();
  arm_park_timer();
}

void cluster_topology::route_parked() {
  request_queue retry;
  retry.splice_back(parked_);
  while (request* r = retry.pop_front()) route(*r);
}

void cluster_topology::arm_park_timer() {
  if (park_timer_armed_ || closed_) return;
  park_timer_armed_ = true;
  park_timer_.expires_after(park_tick);
  park_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](std::error_code) {
    if (alive.expired()) return;
    park_timer_armed_ = false;
    on_park_timer();
  });
}

void cluster_topology::on_park_timer() {
  if (closed_) return;
  const std::int64_t now = port::monotonic_ns();
  request_queue retry;
  retry.splice_back(parked_);
  retry.splice_back(backing_off_);
  while (request* r = retry.pop_front()) {
    const std::uint16_t index = owner_of(*r);
    if (now >= r->give_up_ns) {
      // Never run: the layout never came, the slot's master is unreachable (and no replica has
      // taken over yet), no node served the slot, the cluster said "not now", or the nodes kept
      // sending the command to each other.
      if (r->redirect_looped) {
        r->on_done(errc::redirect_loop);
      } else if (!layout_known_ && last_refresh_error_) {
        // No node could tell the layout: unreachable seeds are an outage (waits ride it out).
        const bool unreachable = last_refresh_error_.category() != deadbolt_category();
        r->on_done(unreachable ? make_error_code(errc::not_connected) : last_refresh_error_);
      } else if (index != slot_table::no_node && nodes_[index]->down) {
        r->on_done(errc::not_connected);
      } else {
        r->on_done(errc::cluster_down);
      }
      continue;
    }
    if (index == slot_table::no_node || nodes_[index]->down) {
      parked_.push_back(*r);
    } else {
      send(*nodes_[index], *r);
    }
  }
  if (replace_due_) {
    replace_due_ = false;
    refresh();  // its answer places the subscriptions again
  }
  if (anything_waits()) {
    refresh();
    arm_park_timer();
  }
}

void cluster_topology::refresh() {
  if (refreshing_ || closed_ || nodes_.empty()) return;
  refreshing_ = true;
  for (std::size_t tries = 0; tries < nodes_.size() && nodes_[refresh_turn_ % nodes_.size()]->down; ++tries) {
    ++refresh_turn_;  // ask a node that is up, if there is one
  }
  node& asked = *nodes_[refresh_turn_ % nodes_.size()];
  layout_asked_ = &asked;
  if (pubsub_ == mode::unknown && !probing_) {
    // Pipelined with the layout: the first request waits one round trip, not two. Ahead of it, so
    // that the node is idle again when the layout answers (a full table may recycle it).
    probing_ = true;
    pubsub_probe_->prepare();
    send(asked, *pubsub_probe_);
    arm_probe_timer(asked);
  }
  layout_->prepare(shards_supported_, asked);
  send(asked, *layout_);
}

void cluster_topology::arm_probe_timer(const node& asked) {
  // Well within the deadline of the requests that wait for the answer (command_timeout): an answer
  // that does not come in time must not make them all fail.
  const auto bound = std::max<std::chrono::milliseconds>(park_tick, cfg_.command_timeout / 3);
  const std::uint16_t index = asked.index;
  const std::uint64_t probe = ++probes_sent_;
  probe_timer_.expires_after(bound);
  probe_timer_.async_wait([this, index, probe, bound, alive = std::weak_ptr<bool>(alive_)](std::error_code ec) {
    if (ec || alive.expired()) return;
    // Answered, lost with its node (and asked again elsewhere), or decided meanwhile: nothing to do.
    if (closed_ || !probing_ || probe != probes_sent_ || pubsub_ != mode::unknown) return;
    probe_timed_out(*nodes_[index], bound);
  });
}

void cluster_topology::probe_timed_out(node& asked, std::chrono::milliseconds bound) {
  // No answer at all: the node is stuck (a paused seed), or is an endpoint that never answers this
  // question. Waiting longer would fail every request that waits for the mode. Once, another node is
  // asked; twice in a row, the mode is decided as Redisson's AUTO decides when its probe fails:
  // classic pub/sub.
  const bool decide = ++probe_timeouts_ >= 2;
  observe_.log(log_level::warning, "PUBSUB SHARDNUMSUB: no answer from ", asked.address.host, ":",
               asked.address.port, " within ", bound.count(),
               decide ? " ms, twice: using classic pub/sub (config::cluster_pubsub chooses)"
                      : " ms: asking another node");
  if (decide) set_pubsub(mode::classic);
  // Nothing asked after the probe on that connection (the layout) can be answered before it: drop it
  // as stuck. The probe and the layout fail, and node_lost() asks another node (the probe too, if
  // the mode is still open). Dropped before anything is routed, so that nothing is sent behind it.
  asked.commands->drop(errc::timed_out);
  if (decide) pubsub_decided();
}

void cluster_topology::pubsub_answered(std::error_code ec, bool sharded) {
  probing_ = false;
  probe_timer_.cancel();
  if (closed_ || pubsub_ != mode::unknown) return;
  if (ec) return;  // not answered (the node was lost): asked again with the next layout
  probe_timeouts_ = 0;
  set_pubsub(sharded ? mode::sharded : mode::classic);
  pubsub_decided();
}

void cluster_topology::set_pubsub(mode m) {
  pubsub_ = m;
  publish_ = m == mode::sharded ? "spublish" : "publish";
}

void cluster_topology::pubsub_decided() {
  // Nothing is routed yet: the layout's answer comes next and routes what waits.
  if (subs_ && layout_known_) subs_->replace();
  if (!layout_known_) return;
  route_parked();
}

void cluster_topology::layout_answered(std::error_code ec, const reply& answer, const node& from) {
  refreshing_ = false;
  layout_asked_ = nullptr;
  if (closed_) return;
  bool refused = false;  // the node answered, and its answer was no
  if (!ec && answer.is_error()) {
    const server_error_kind kind = server_error_kind_of(answer.text);
    if (shards_supported_ && (kind == server_error_kind::other || kind == server_error_kind::unknown_command)) {
      // Before Redis 7: no CLUSTER SHARDS. Ask the same node the old way.
      shards_supported_ = false;
      return refresh();
    }
    ec = server_error_code(kind);  // NOPERM: the ACL user may not ask for the layout
    refused = kind == server_error_kind::other || kind == server_error_kind::unknown_command ||
              kind == server_error_kind::no_permission;
  }
  std::vector<shard_owner> shards;
  if (!ec) ec = shards_supported_ ? parse_cluster_shards(answer, from.address.host, shards)
                                  : parse_cluster_slots(answer, from.address.host, shards);
  if (!ec && shards.empty()) ec = errc::cluster_down;  // a node not (yet) part of a cluster
  if (ec) {
    last_refresh_error_ = ec;
    ++refresh_turn_;  // ask another node next time
    layout_refusals_ = refused ? layout_refusals_ + 1 : 0;
    if (!layout_known_ && layout_refusals_ >= seeds_.size()) {
      // Every seed refused (each was asked in turn): asking again gets the same answer until the servers
      // are reconfigured, so the waiting requests fail now rather than at their deadline. Asked again
      // for the next request.
      if (layout_refusals_ == seeds_.size()) {
        observe_.log(log_level::warning, "no seed tells the cluster's layout (", answer.text,
                     "): is it a cluster, and may this user run CLUSTER SHARDS or CLUSTER SLOTS?");
      }
      fail_parked(ec);
      return;
    }
    if (anything_waits()) arm_park_timer();
    return;
  }
  layout_refusals_ = 0;
  slots_->clear();
  // Masters already known first, so that a full table makes room only from nodes the new layout
  // does not name.
  for (const bool known : {true, false}) {
    for (const auto& shard : shards) {
      const bool is_known = std::any_of(nodes_.begin(), nodes_.end(),
                                        [&](const std::unique_ptr<node>& n) { return n->address == shard.master; });
      if (is_known != known) continue;
      node* owner = node_for(shard.master);
      if (owner == nullptr) {
        last_refresh_error_ = errc::node_table_full;
        layout_known_ = false;
        return fail_parked(errc::node_table_full);
      }
      for (const auto& [first, last] : shard.ranges) slots_->assign(first, last, owner->index);
    }
  }
  layout_known_ = true;
  last_refresh_error_ = {};
  if (observe_.logs(log_level::info)) {
    std::string now = describe_layout(shards);
    if (now != logged_layout_) {
      observe_.log(log_level::info, "cluster: layout from ", from.address.host, ":", from.address.port, ": ", now);
      logged_layout_ = std::move(now);
    }
  }
  refresh_turn_ = from.index;  // it answered: ask it again next time
  if (subs_) subs_->replace();
  route_parked();
}

void cluster_topology::redirected(node& from, request& r, std::string_view error_text) {
  const auto where = parse_redirect(error_text, from.address.host);
  if (!where) {
    // TRYAGAIN (a multi-key command during a slot's migration) or CLUSTERDOWN: not run; try again soon.
    back_off(r);
    return;
  }
  if (++r.redirects > max_redirects) {
    // Nodes that disagree about the slot: for a moment while it changes hands (one node updated,
    // the other not yet), for good if the cluster is misconfigured. Wait, then follow them again.
    r.redirect_looped = true;
    back_off(r);
    return;
  }
  node* target = node_for(where->target);
  if (target == nullptr) return r.on_done(errc::node_table_full);
  if (where->what == redirect::kind::moved) {
    slots_->assign(where->slot, target->index);
    r.asking = false;
    // One slot moved: others probably did too. Ask the new owner: it knows its slots for sure, while
    // other nodes (replicas above all) may still answer the layout from before the move.
    if (!refreshing_) refresh_turn_ = target->index;
    refresh();
  } else {
    r.asking = true;
  }
  // A node whose connection is down gets nothing, as in route(): the command waits for it to come
  // back, or for the layout to name another node (an ASK is asked again through the slot's owner).
  // Sent to it now, it would sit in that connection's queue, following no new layout.
  if (target->down) return park(r);
  send(*target, r);
}

void cluster_topology::fail_parked(std::error_code ec) {
  request_queue failing;
  failing.splice_back(parked_);
  failing.splice_back(backing_off_);
  while (request* r = failing.pop_front()) r->on_done(ec);
}

subscriber& cluster_topology::subscriber_for(std::string_view) {
  if (!subs_) {
    subs_ = std::make_shared<subscriber>(executor_, ep_, std::make_unique<static_addresses>(seeds_), cfg_,
                                         static_cast<channel_router*>(this));
  }
  return *subs_;
}

const server_address* cluster_topology::channel_master(std::string_view channel) const {
  // The layout alone decides, not the health of the command connection to that master: a channel
  // lives on its own subscriber link, which reconnects and subscribes again by itself (and, if its
  // master really failed, makes the layout be read again, which then names the new master). Were a
  // dropped command connection to count, a blip of it would unsubscribe the channel, and nothing
  // would subscribe it again when the connection came back.
  if (!layout_known_) return nullptr;
  const std::uint16_t index = slots_->node_of(key_slot(channel));
  if (index == slot_table::no_node) return nullptr;
  return &nodes_[index]->address;
}

bool cluster_topology::subscription_refused(std::string_view error_text, const server_address& from) {
  if (!is_cluster_redirection(error_text) || closed_) return false;
  const auto where = parse_redirect(error_text, from.host);
  if (where && where->what == redirect::kind::moved) {
    // The layout is behind: read it from the channel's new master, then replace() subscribes there.
    if (node* target = node_for(where->target)) {
      if (!refreshing_) refresh_turn_ = target->index;
    }
    refresh();
  } else {
    replace_due_ = true;  // not now (CLUSTERDOWN, a migration): look again on the next tick
    arm_park_timer();
  }
  return true;
}

bool cluster_topology::settled() const {
  if (anything_waits()) return false;
  return std::all_of(nodes_.begin(), nodes_.end(), [](const std::unique_ptr<node>& n) {
    return !n->started || !n->commands->ready() || n->commands->idle();
  });
}

void cluster_topology::stop_subscribers() {
  if (subs_) subs_->stop();
}

void cluster_topology::close() {
  if (closed_) return;
  closed_ = true;
  park_timer_.cancel();
  probe_timer_.cancel();
  if (subs_) subs_->stop();
  for (auto& n : nodes_) n->commands->stop();
  fail_parked(errc::shutting_down);
}

}  // namespace deadbolt::detail
