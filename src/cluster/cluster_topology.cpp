#include "cluster/cluster_topology.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>

#include "base/reply_builder.hpp"
#include "deadbolt/port/hooks.hpp"
#include "wire/address_source.hpp"

namespace deadbolt::detail {
namespace {

// The channel PUBSUB SHARDNUMSUB asks about. The bare form (no channel) hangs on some managed
// services (Azure Managed Redis); any channel answers the same question. Read-only: it counts.
constexpr std::string_view probe_channel = "deadbolt:pubsub-probe";

cluster_routing_settings routing_settings(const config& cfg) {
  cluster_routing_settings s;
  s.max_nodes = cfg.max_cluster_nodes;
  s.command_timeout_ms = std::chrono::duration_cast<std::chrono::milliseconds>(cfg.command_timeout).count();
  switch (cfg.cluster_pubsub) {
    case pubsub_mode::automatic: s.cluster_pubsub = cluster_routing_settings::pubsub::automatic; break;
    case pubsub_mode::sharded: s.cluster_pubsub = cluster_routing_settings::pubsub::sharded; break;
    case pubsub_mode::classic: s.cluster_pubsub = cluster_routing_settings::pubsub::classic; break;
  }
  return s;
}

}  // namespace

// One node: its command connection, and what it tells the routing (redirections, a lost connection).
struct cluster_topology::node final : redirect_handler, connection_listener {
  node(cluster_topology& owner, std::uint16_t index) : owner(owner), index(index) {}

  void on_redirect(request& r, std::string_view error_text) override {
    owner.routing_.redirected(index, r, error_text, port::monotonic_ns());
    owner.pump();
  }
  void on_connected() override { owner.routing_.node_up(index); }
  void on_disconnected(std::error_code) override { owner.node_lost(*this); }
  void on_connect_failed(std::error_code) override { owner.node_lost(*this); }

  cluster_topology& owner;
  std::uint16_t index;
  std::shared_ptr<connection> commands;
  static_addresses* addresses = nullptr;  // the connection's, which names the node's replicas
  bool started = false;
};

// CLUSTER SHARDS (or SLOTS), its whole reply kept as a tree.
class cluster_topology::layout_query final : public request {
 public:
  explicit layout_query(cluster_topology& owner) : owner_(owner) {}

  void prepare(bool shards) {
    shards_ = shards;
    answer_.take();
  }
  void encode(resp::encoder& e) override { e.command("CLUSTER", shards_ ? "SHARDS" : "SLOTS"); }
  void on_node(const resp::node& n) override { answer_.add(n); }
  void on_done(std::error_code ec) override {
    owner_.routing_.layout_answered(ec, answer_.result(), port::monotonic_ns());
    owner_.pump();
  }

 private:
  cluster_topology& owner_;
  bool shards_ = true;
  reply_builder answer_;
};

// PUBSUB SHARDNUMSUB <channel>: it works where sharded pub/sub does (Redis 7+), Redisson's test for AUTO.
class cluster_topology::pubsub_query final : public request {
 public:
  explicit pubsub_query(cluster_topology& owner) : owner_(owner) {}

  void prepare() {
    error_reply_ = false;
    error_text_.clear();
  }
  void encode(resp::encoder& e) override { e.command("PUBSUB", "SHARDNUMSUB", probe_channel); }
  void on_node(const resp::node& n) override {
    if (n.depth != 0 || !resp::is_error(n.type)) return;
    error_reply_ = true;  // what it means is the routing's to say
    error_text_.assign(n.value);
  }
  void on_done(std::error_code ec) override {
    owner_.routing_.probe_answered(ec, error_reply_, error_text_, port::monotonic_ns());
    owner_.pump();
  }

 private:
  cluster_topology& owner_;
  bool error_reply_ = false;
  std::string error_text_;
};

cluster_topology::cluster_topology(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      seeds_(addresses_of(ep_.cluster_seeds)),
      routing_(routing_settings(cfg_), seeds_, *this),
      layout_(std::make_unique<layout_query>(*this)),
      pubsub_probe_(std::make_unique<pubsub_query>(*this)),
      tick_timer_(executor_),
      probe_timer_(executor_),
      observe_(cfg),
      placement_(*this, cfg.max_cluster_nodes) {
  nodes_.reserve(cfg_.max_cluster_nodes);
  pump();  // the seeds' connections (not started), the pub/sub mode if the config fixes it
}

cluster_topology::~cluster_topology() { close(); }

void cluster_topology::submit(request& r) {
  routing_.submit(r, port::monotonic_ns());
  pump();
}

std::uint32_t cluster_topology::node_of(std::string_view key) const {
  const std::uint16_t index = routing_.node_of(key);
  return index == cluster_routing::no_node ? static_cast<std::uint32_t>(cfg_.max_cluster_nodes) : index;
}

void cluster_topology::pump() {
  if (pumping_) return;  // the loop below carries out what this event queued
  pumping_ = true;
  for (auto a = routing_.next(); a.what != cluster_routing::action::kind::none; a = routing_.next()) perform(a);
  pumping_ = false;
}

void cluster_topology::perform(cluster_routing::action& a) {
  using kind = cluster_routing::action::kind;
  switch (a.what) {
    case kind::none: break;
    case kind::open_node: open_node(a.node); break;
    case kind::send: send(*nodes_[a.node], *a.req); break;
    case kind::fail: a.req->on_done(a.error); break;
    case kind::refuse: {
      request* r = a.req;
      asio::post(executor_, [r, ec = a.error] { r->on_done(ec); });
      break;
    }
    case kind::fail_all:
      while (request* r = a.requests.pop_front()) r->on_done(a.error);
      break;
    case kind::ask_layout:
      layout_->prepare(a.shards);
      send(*nodes_[a.node], *layout_);
      break;
    case kind::probe_pubsub:
      pubsub_probe_->prepare();
      send(*nodes_[a.node], *pubsub_probe_);
      arm_probe_timer(a.delay_ms, a.probe);
      break;
    case kind::cancel_probe_timer: probe_timer_.cancel(); break;
    case kind::arm_tick: arm_tick(a.delay_ms); break;
    case kind::drop_node: nodes_[a.node]->commands->drop(a.error); break;
    case kind::pubsub_decided:
      publish_ = routing_.pubsub_mode() == cluster_routing::pubsub::sharded ? "spublish" : "publish";
      break;
    case kind::replace_subscriptions:
      if (subs_) subs_->replace();
      break;
    case kind::layout_read:
      // Before the requests that waited for the layout are sent: their replica sync counts on it.
      name_replicas();
      log_layout(a.node);
      break;
    case kind::no_layout:
      observe_.log(log_level::warning, "no seed tells the cluster's layout (", routing_.refusal(),
                   "): is it a cluster, and may this user run CLUSTER SHARDS or CLUSTER SLOTS?");
      break;
    case kind::probe_unanswered: {
      const server_address& asked = routing_.address(a.node);
      observe_.log(log_level::warning, "PUBSUB SHARDNUMSUB: no answer from ", asked.host, ":", asked.port, " within ",
                   a.delay_ms,
                   a.decided ? " ms, twice: using classic pub/sub (config::cluster_pubsub chooses)"
                             : " ms: asking another node");
      break;
    }
  }
}

void cluster_topology::open_node(std::uint16_t index) {
  if (index == nodes_.size()) nodes_.push_back(std::make_unique<node>(*this, index));
  node& n = *nodes_[index];
  if (std::shared_ptr<connection> old = std::move(n.commands)) {
    // A recycled place: the old connection's goodbye is not the new node's news. Closed later: this
    // may run inside that connection's own reply routing (the layout it answered).
    old->set_listener(nullptr);
    old->set_redirect_handler(nullptr);
    asio::post(executor_, [old] { old->stop(); });
  }
  auto addresses = std::make_unique<static_addresses>(std::vector<server_address>{routing_.address(index)});
  addresses->name_replicas(replicas_of(index));
  n.addresses = addresses.get();
  n.commands = std::make_shared<connection>(executor_, ep_, std::move(addresses), cfg_, connection::role::command);
  n.commands->set_redirect_handler(&n);
  n.commands->set_listener(&n);
  n.started = false;
}

void cluster_topology::send(node& n, request& r) {
  if (!n.started) {
    n.started = true;
    n.commands->start();
  }
  n.commands->submit(r);
}

bool cluster_topology::busy(std::uint16_t index) const {
  return index < nodes_.size() && nodes_[index]->started && !nodes_[index]->commands->idle();
}

void cluster_topology::node_lost(node& n) {
  if (routing_.closed()) return;
  request_queue unsent;
  n.commands->take_unsent(unsent);
  request_queue theirs;  // the operations' requests; the layout query and the probe are the routing's news
  bool layout_lost = false;
  bool probe_lost = false;
  while (request* r = unsent.pop_front()) {
    if (r == layout_.get()) {
      layout_lost = true;
    } else if (r == pubsub_probe_.get()) {
      probe_lost = true;
    } else {
      theirs.push_back(*r);
    }
  }
  routing_.node_down(n.index, theirs, layout_lost, probe_lost, port::monotonic_ns());
  pump();
}

void cluster_topology::arm_tick(std::int64_t delay_ms) {
  tick_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  tick_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](std::error_code) {
    if (alive.expired()) return;
    routing_.tick(port::monotonic_ns());
    pump();
  });
}

void cluster_topology::arm_probe_timer(std::int64_t delay_ms, std::uint64_t probe) {
  probe_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  probe_timer_.async_wait([this, probe, alive = std::weak_ptr<bool>(alive_)](std::error_code ec) {
    if (ec || alive.expired()) return;
    routing_.probe_timer_fired(probe, port::monotonic_ns());
    pump();
  });
}

void cluster_topology::log_layout(std::uint16_t from) {
  if (!observe_.logs(log_level::info)) return;
  std::string now = describe_layout(routing_.layout());
  if (now == logged_layout_) return;
  const server_address& where = routing_.address(from);
  observe_.log(log_level::info, "cluster: layout from ", where.host, ":", where.port, ": ", now);
  logged_layout_ = std::move(now);
}

void cluster_topology::name_replicas() {
  for (auto& n : nodes_) {
    if (n->addresses->name_replicas(replicas_of(n->index)) && n->started) n->commands->replicas_renamed();
  }
}

const std::vector<server_address>& cluster_topology::replicas_of(std::uint16_t index) const {
  static const std::vector<server_address> none;
  const server_address& where = routing_.address(index);
  for (const shard_owner& shard : routing_.layout()) {
    if (shard.master == where) return shard.replicas;
  }
  return none;
}

subscriber& cluster_topology::subscriber_for(std::string_view) {
  if (!subs_) {
    subs_ = std::make_shared<subscriber>(executor_, ep_, std::make_unique<static_addresses>(seeds_), cfg_,
                                         &placement_);
  }
  return *subs_;
}

void cluster_topology::layout_stale() {
  routing_.layout_stale();
  pump();
}

bool cluster_topology::subscription_refused(std::string_view error_text, const server_address& from) {
  const bool learned = routing_.subscription_refused(error_text, from);
  pump();
  return learned;
}

bool cluster_topology::settled() const {
  if (routing_.anything_waits()) return false;
  return std::all_of(nodes_.begin(), nodes_.end(), [](const std::unique_ptr<node>& n) {
    return !n->started || !n->commands->ready() || n->commands->idle();
  });
}

void cluster_topology::stop_subscribers() {
  if (subs_) subs_->stop();
}

void cluster_topology::close() {
  if (routing_.closed()) return;
  routing_.close();
  // What waited fails once every connection is stopped (their queued requests fail first).
  const bool pumping = pumping_;
  pumping_ = true;
  tick_timer_.cancel();
  probe_timer_.cancel();
  if (subs_) subs_->stop();
  for (auto& n : nodes_) n->commands->stop();
  pumping_ = pumping;
  pump();
}

}  // namespace deadbolt::detail
