#include "cluster/cluster_routing.hpp"

#include <algorithm>

#include "base/key_slot.hpp"
#include "base/server_error.hpp"
#include "cluster/redirect.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

using kind = cluster_routing::action::kind;

cluster_routing::action make(kind what, std::uint16_t node = cluster_routing::no_node) {
  cluster_routing::action a;
  a.what = what;
  a.node = node;
  return a;
}

cluster_routing::action for_request(kind what, request& r, std::uint16_t node, std::error_code ec = {}) {
  cluster_routing::action a = make(what, node);
  a.req = &r;
  a.error = ec;
  return a;
}

// The node answered, and its answer was no: asking it again gets the same answer.
bool says_no(server_error_kind k) {
  return k == server_error_kind::other || k == server_error_kind::unknown_command ||
         k == server_error_kind::no_permission;
}

}  // namespace

cluster_routing::cluster_routing(const cluster_routing_settings& settings, const std::vector<server_address>& seeds,
                                 const cluster_node_usage& usage)
    : settings_(settings), usage_(usage), seed_count_(seeds.size()), slots_(std::make_unique<slot_table>()) {
  switch (settings_.cluster_pubsub) {
    case cluster_routing_settings::pubsub::automatic: pubsub_ = pubsub::unknown; break;
    case cluster_routing_settings::pubsub::sharded: pubsub_ = pubsub::sharded; break;
    case cluster_routing_settings::pubsub::classic: pubsub_ = pubsub::classic; break;
  }
  if (pubsub_ != pubsub::unknown) push(make(kind::pubsub_decided));
  nodes_.reserve(settings_.max_nodes);
  actions_.reserve(settings_.max_nodes + 8);  // a layout answer opens at most max_nodes nodes
  for (const auto& s : seeds) node_for(s);
}

cluster_routing::~cluster_routing() = default;

cluster_routing::action cluster_routing::next() {
  for (;;) {
    if (taken_ < actions_.size()) {
      const action a = actions_[taken_++];
      if (taken_ == actions_.size()) {
        actions_.clear();
        taken_ = 0;
      }
      return a;
    }
    // Released requests are decided as their turn comes: the actions before them may have changed
    // what they see (a node dropped). What a tick releases is decided after what a layout released
    // meanwhile, as a call nested in the tick's loop would have.
    if (request* r = rerouting_.pop_front()) {
      route(*r, true);
    } else if (request* d = due_.pop_front()) {
      tick_one(*d);
    } else if (tick_pending_) {
      tick_pending_ = false;
      tick_done();
    } else {
      return {};
    }
  }
}

bool cluster_routing::anything_waits() const noexcept {
  return !parked_.empty() || !backing_off_.empty() || !rerouting_.empty() || !due_.empty();
}

std::uint16_t cluster_routing::node_for(const server_address& where) {
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    if (nodes_[i].address == where) return static_cast<std::uint16_t>(i);
  }
  if (nodes_.size() >= settings_.max_nodes) return recycle(where);
  nodes_.push_back(node_entry{where, false});
  const auto index = static_cast<std::uint16_t>(nodes_.size() - 1);
  push(make(kind::open_node, index));
  return index;
}

std::uint16_t cluster_routing::recycle(const server_address& where) {
  // A full table takes the place of a node the layout no longer names (a replaced master, a seed
  // that is a replica) if nothing waits on it: a long-lived client whose cluster changes its nodes
  // does not run out of places.
  for (std::size_t i = 0; i < nodes_.size(); ++i) {
    const auto index = static_cast<std::uint16_t>(i);
    if (index == layout_asked_ || slots_->serves_any(index) || usage_.busy(index)) continue;
    nodes_[i].address = where;
    nodes_[i].down = false;
    push(make(kind::open_node, index));
    return index;
  }
  return no_node;
}

void cluster_routing::submit(request& r, std::int64_t now_ns) {
  now_ns_ = now_ns;
  if (closed_) return push(for_request(kind::refuse, r, no_node, errc::shutting_down));
  if (!name_fits_one_slot(r.route_key)) {  // its scripts would get CROSSSLOT: refuse before anything runs
    return push(for_request(kind::refuse, r, no_node, errc::cross_slot));
  }
  r.route_.asking = false;
  r.route_.redirects = 0;
  r.route_.redirect_looped = false;
  r.route_.give_up_ns = 0;
  route(r, false);
}

std::uint16_t cluster_routing::owner_of(const request& r) const {
  // Nothing is routed before the pub/sub mode is known: the scripts publish with it.
  if (!layout_known_ || pubsub_ == pubsub::unknown) return no_node;
  return slots_->node_of(r.route_key.empty() ? 0 : key_slot(r.route_key));
}

std::uint16_t cluster_routing::node_of(std::string_view key) const noexcept {
  return layout_known_ ? slots_->node_of(key_slot(key)) : no_node;
}

const server_address* cluster_routing::channel_master(std::string_view channel) const {
  // The layout alone decides, not the health of the command connection to that master: a channel
  // lives on its own subscriber link, which reconnects and subscribes again by itself (and, if its
  // master really failed, makes the layout be read again, which then names the new master). Were a
  // dropped command connection to count, a blip of it would unsubscribe the channel, and nothing
  // would subscribe it again when the connection came back.
  const std::uint16_t index = node_of(channel);
  return index == no_node ? nullptr : &nodes_[index].address;
}

void cluster_routing::route(request& r, bool released) {
  const std::uint16_t index = owner_of(r);
  if (index != no_node && !nodes_[index].down) return push(for_request(kind::send, r, index));
  if (!released) return park(r);
  // Released by what was just learnt (a layout, the pub/sub mode), and still without a route: the
  // layout is as fresh as it gets, so it is read again on the tick, not at once. Asked again at once,
  // it would be answered the same at once, again and again, while a failover runs (no master for
  // the failed one's slots, or one whose connection is down).
  start_waiting(r);
  parked_.push_back(r);
  arm_tick();
}

void cluster_routing::start_waiting(request& r) {
  if (r.route_.give_up_ns == 0) r.route_.give_up_ns = now_ns_ + settings_.command_timeout_ms * 1'000'000;
  // The redirections start again from the slot table: the bound is on redirections without a pause.
  r.route_.redirects = 0;
  r.route_.asking = false;
}

void cluster_routing::park(request& r) {
  if (closed_) return push(for_request(kind::fail, r, no_node, errc::shutting_down));  // nothing would wake it
  start_waiting(r);
  parked_.push_back(r);
  refresh();
  arm_tick();
}

void cluster_routing::back_off(request& r) {
  // Not resent when the layout answers: the layout names the same node, which would answer the same
  // at once, again and again, until the migration or the failover ends.
  if (closed_) return push(for_request(kind::fail, r, no_node, errc::shutting_down));
  start_waiting(r);
  backing_off_.push_back(r);
  refresh();
  arm_tick();
}

void cluster_routing::arm_tick() {
  if (tick_armed_ || closed_) return;
  tick_armed_ = true;
  action a = make(kind::arm_tick);
  a.delay_ms = tick_ms;
  push(a);
}

void cluster_routing::node_up(std::uint16_t node) {
  if (node < nodes_.size()) nodes_[node].down = false;
}

void cluster_routing::node_down(std::uint16_t node, request_queue& unsent, bool layout_lost, bool probe_lost,
                                std::int64_t now_ns) {
  // A failover may have begun: what was not written yet waits for the layout to name the slot's new
  // master (what was written follows the connection's rules: an unanswered acquire is verified).
  if (closed_ || node >= nodes_.size()) return;
  now_ns_ = now_ns;
  nodes_[node].down = true;
  if (probe_lost) probing_ = false;  // asked again with the next layout
  while (request* r = unsent.pop_front()) park(*r);
  if (layout_lost) layout_answered(errc::not_connected, reply{}, now_ns);  // ask another node
  refresh();
}

void cluster_routing::tick(std::int64_t now_ns) {
  tick_armed_ = false;
  if (closed_) return;
  now_ns_ = tick_ns_ = now_ns;
  due_.splice_back(parked_);
  due_.splice_back(backing_off_);
  tick_pending_ = true;
}

std::error_code cluster_routing::give_up_error(const request& r, std::uint16_t owner) const {
  // Never run: the layout never came, the slot's master is unreachable (and no replica has taken
  // over yet), no node served the slot, the cluster said "not now", or the nodes kept sending the
  // command to each other.
  if (r.route_.redirect_looped) return errc::redirect_loop;
  if (!layout_known_ && last_refresh_error_) {
    // No node could tell the layout: unreachable seeds are an outage (waits ride it out).
    const bool unreachable = last_refresh_error_.category() != deadbolt_category();
    return unreachable ? make_error_code(errc::not_connected) : last_refresh_error_;
  }
  if (owner != no_node && nodes_[owner].down) return errc::not_connected;
  return errc::cluster_down;
}

void cluster_routing::tick_one(request& r) {
  const std::uint16_t index = owner_of(r);
  if (tick_ns_ >= r.route_.give_up_ns) return push(for_request(kind::fail, r, no_node, give_up_error(r, index)));
  if (index == no_node || nodes_[index].down) return parked_.push_back(r);
  push(for_request(kind::send, r, index));
}

void cluster_routing::tick_done() {
  if (closed_) return;
  if (replace_due_) {
    replace_due_ = false;
    refresh();  // its answer places the subscriptions again
  }
  if (anything_waits()) {
    refresh();
    arm_tick();
  }
}

void cluster_routing::refresh() {
  if (refreshing_ || closed_ || nodes_.empty()) return;
  refreshing_ = true;
  for (std::size_t tries = 0; tries < nodes_.size() && nodes_[refresh_turn_ % nodes_.size()].down; ++tries) {
    ++refresh_turn_;  // ask a node that is up, if there is one
  }
  const auto asked = static_cast<std::uint16_t>(refresh_turn_ % nodes_.size());
  layout_asked_ = asked;
  if (pubsub_ == pubsub::unknown && !probing_) {
    // Pipelined with the layout: the first request waits one round trip, not two. Ahead of it, so
    // that the node is idle again when the layout answers (a full table may recycle it). Bounded well
    // within the deadline of the requests that wait for the answer (command_timeout): an answer that
    // does not come in time must not make them all fail.
    probing_ = true;
    probe_node_ = asked;
    action a = make(kind::probe_pubsub, asked);
    a.delay_ms = std::max<std::int64_t>(tick_ms, settings_.command_timeout_ms / 3);
    a.probe = ++probes_sent_;
    push(a);
  }
  action a = make(kind::ask_layout, asked);
  a.shards = shards_supported_;
  push(a);
}

void cluster_routing::layout_stale() { refresh(); }

void cluster_routing::probe_timer_fired(std::uint64_t probe, std::int64_t now_ns) {
  // Answered, lost with its node (and asked again elsewhere), or decided meanwhile: nothing to do.
  if (closed_ || !probing_ || probe != probes_sent_ || pubsub_ != pubsub::unknown) return;
  now_ns_ = now_ns;
  // No answer at all: the node is stuck (a paused seed), or is an endpoint that never answers this
  // question. Waiting longer would fail every request that waits for the mode. Once, another node is
  // asked; twice in a row, the mode is decided as Redisson's AUTO decides when its probe fails:
  // classic pub/sub.
  const bool decide = ++probe_timeouts_ >= 2;
  action note = make(kind::probe_unanswered, probe_node_);
  note.delay_ms = std::max<std::int64_t>(tick_ms, settings_.command_timeout_ms / 3);
  note.decided = decide;
  push(note);
  if (decide) set_pubsub(pubsub::classic);
  // Nothing asked after the probe on that connection (the layout) can be answered before it: drop it
  // as stuck. The probe and the layout fail, and node_down() asks another node (the probe too, if
  // the mode is still open). Dropped before anything is routed, so that nothing is sent behind it:
  // what the decision releases is routed once the drop is done.
  action drop = make(kind::drop_node, probe_node_);
  drop.error = errc::timed_out;
  push(drop);
  if (decide) mode_known();
}

void cluster_routing::probe_answered(std::error_code ec, bool error_reply, std::string_view error_text,
                                     std::int64_t now_ns) {
  // An unknown subcommand (before Redis 7) or not allowed (an ACL user): classic, as Redisson decides.
  // Any other error (LOADING, ...) says nothing about the server: ask again.
  const bool refused = !ec && error_reply && says_no(server_error_kind_of(error_text));
  if (!ec && error_reply && !refused) ec = errc::server_error;
  probing_ = false;
  push(make(kind::cancel_probe_timer));
  if (closed_ || pubsub_ != pubsub::unknown) return;
  if (ec) return;  // not answered (the node was lost): asked again with the next layout
  now_ns_ = now_ns;
  probe_timeouts_ = 0;
  set_pubsub(refused ? pubsub::classic : pubsub::sharded);
  mode_known();
}

void cluster_routing::set_pubsub(pubsub m) {
  pubsub_ = m;
  push(make(kind::pubsub_decided));
}

void cluster_routing::mode_known() {
  // Nothing is routed yet without a layout: its answer comes next and routes what waits.
  if (!layout_known_) return;
  push(make(kind::replace_subscriptions));
  route_parked();
}

void cluster_routing::layout_answered(std::error_code ec, const reply& answer, std::int64_t now_ns) {
  const std::uint16_t from = layout_asked_;
  refreshing_ = false;
  layout_asked_ = no_node;
  if (closed_ || from >= nodes_.size()) return;
  now_ns_ = now_ns;
  bool refused = false;  // the node answered, and its answer was no
  if (!ec && answer.is_error()) {
    const server_error_kind kind = server_error_kind_of(answer.text);
    if (shards_supported_ && (kind == server_error_kind::other || kind == server_error_kind::unknown_command)) {
      // Before Redis 7: no CLUSTER SHARDS. Ask the same node the old way.
      shards_supported_ = false;
      return refresh();
    }
    ec = server_error_code(kind);  // NOPERM: the ACL user may not ask for the layout
    refused = says_no(kind);
  }
  const std::string& host = nodes_[from].address.host;
  if (!ec) ec = shards_supported_ ? parse_cluster_shards(answer, host, layout_) : parse_cluster_slots(answer, host, layout_);
  if (!ec && layout_.empty()) ec = errc::cluster_down;  // a node not (yet) part of a cluster
  if (ec) {
    last_refresh_error_ = ec;
    ++refresh_turn_;  // ask another node next time
    layout_refusals_ = refused ? layout_refusals_ + 1 : 0;
    if (!layout_known_ && layout_refusals_ >= seed_count_) {
      // Every seed refused (each was asked in turn): asking again gets the same answer until the servers
      // are reconfigured, so the waiting requests fail now rather than at their deadline. Asked again
      // for the next request.
      if (layout_refusals_ == seed_count_) {
        refusal_ = answer.text;
        push(make(kind::no_layout));
      }
      fail_parked(ec);
      return;
    }
    if (anything_waits()) arm_tick();
    return;
  }
  layout_refusals_ = 0;
  slots_->clear();
  // Masters already known first, so that a full table makes room only from nodes the new layout
  // does not name.
  for (const bool known : {true, false}) {
    for (const auto& shard : layout_) {
      const bool is_known = std::any_of(nodes_.begin(), nodes_.end(),
                                        [&](const node_entry& n) { return n.address == shard.master; });
      if (is_known != known) continue;
      const std::uint16_t owner = node_for(shard.master);
      if (owner == no_node) {
        last_refresh_error_ = errc::node_table_full;
        layout_known_ = false;
        return fail_parked(errc::node_table_full);
      }
      for (const auto& [first, last] : shard.ranges) slots_->assign(first, last, owner);
    }
  }
  layout_known_ = true;
  last_refresh_error_ = {};
  push(make(kind::layout_read, from));
  refresh_turn_ = from;  // it answered: ask it again next time
  push(make(kind::replace_subscriptions));
  route_parked();
}

void cluster_routing::redirected(std::uint16_t from, request& r, std::string_view error_text, std::int64_t now_ns) {
  now_ns_ = now_ns;
  const auto where = parse_redirect(error_text, from < nodes_.size() ? nodes_[from].address.host : std::string());
  if (!where) {
    // TRYAGAIN (a multi-key command during a slot's migration) or CLUSTERDOWN: not run; try again soon.
    return back_off(r);
  }
  if (++r.route_.redirects > max_redirects) {
    // Nodes that disagree about the slot: for a moment while it changes hands (one node updated,
    // the other not yet), for good if the cluster is misconfigured. Wait, then follow them again.
    r.route_.redirect_looped = true;
    return back_off(r);
  }
  const std::uint16_t target = node_for(where->target);
  if (target == no_node) return push(for_request(kind::fail, r, no_node, errc::node_table_full));
  if (where->what == redirect::kind::moved) {
    slots_->assign(where->slot, target);
    r.route_.asking = false;
    // One slot moved: others probably did too. Ask the new owner: it knows its slots for sure, while
    // other nodes (replicas above all) may still answer the layout from before the move.
    if (!refreshing_) refresh_turn_ = target;
    refresh();
  } else {
    r.route_.asking = true;
  }
  // A node whose connection is down gets nothing, as in route(): the command waits for it to come
  // back, or for the layout to name another node (an ASK is asked again through the slot's owner).
  // Sent to it now, it would sit in that connection's queue, following no new layout.
  if (nodes_[target].down) return park(r);
  push(for_request(kind::send, r, target));
}

bool cluster_routing::subscription_refused(std::string_view error_text, const server_address& from) {
  if (!is_cluster_redirection(server_error_kind_of(error_text)) || closed_) return false;
  const auto where = parse_redirect(error_text, from.host);
  if (where && where->what == redirect::kind::moved) {
    // The layout is behind: read it from the channel's new master, then replace_subscriptions
    // subscribes there.
    const std::uint16_t target = node_for(where->target);
    if (target != no_node && !refreshing_) refresh_turn_ = target;
    refresh();
  } else {
    replace_due_ = true;  // not now (CLUSTERDOWN, a migration): look again on the next tick
    arm_tick();
  }
  return true;
}

void cluster_routing::fail_parked(std::error_code ec) {
  action a = make(kind::fail_all);
  a.requests.splice_back(parked_);
  a.requests.splice_back(backing_off_);
  a.error = ec;
  if (!a.requests.empty()) push(a);
}

void cluster_routing::close() {
  if (closed_) return;
  closed_ = true;
  action a = make(kind::fail_all);
  a.requests.splice_back(parked_);
  a.requests.splice_back(backing_off_);
  a.requests.splice_back(rerouting_);
  a.requests.splice_back(due_);
  a.error = errc::shutting_down;
  if (!a.requests.empty()) push(a);
}

}  // namespace deadbolt::detail
