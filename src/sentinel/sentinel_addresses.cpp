#include "sentinel/sentinel_addresses.hpp"

#include <algorithm>
#include <charconv>
#include <utility>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

// SENTINEL GET-MASTER-ADDR-BY-NAME <name>: [host, port], or nil for a name it does not know.
class sentinel_addresses::query final : public request {
 public:
  query(sentinel_addresses& owner, std::string master) : owner_(owner), master_(std::move(master)) {}

  void prepare() {
    result = make_error_code(errc::not_connected);
    error_ = false;
    unknown_ = false;
    parts_ = 0;
    found_ = server_address{};
  }
  void encode(resp::encoder& e) override { e.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_); }
  void on_node(const resp::node& n) override {
    if (n.depth == 0) {
      error_ = resp::is_error(n.type);
      unknown_ = n.type == resp::type::null;
      return;
    }
    if (n.depth != 1) return;
    if (parts_ == 0) {
      found_.host.assign(n.value);
    } else if (parts_ == 1) {
      unsigned port = 0;
      const auto [end, err] = std::from_chars(n.value.data(), n.value.data() + n.value.size(), port);
      if (err != std::errc() || end != n.value.data() + n.value.size() || port == 0 || port > 65535) error_ = true;
      found_.port = static_cast<std::uint16_t>(port);
    }
    ++parts_;
  }
  void on_done(std::error_code ec) override {
    if (!ec && (error_ || (!unknown_ && (parts_ != 2 || found_.host.empty())))) ec = errc::protocol_error;
    if (!ec && unknown_) ec = errc::unknown_master;
    result = ec;
    if (ec) return;
    std::error_code not_numeric;
    asio::ip::make_address(found_.host, not_numeric);
    found_.numeric = !not_numeric;
  }
  /// Set by on_done(): the answer (the replicas' question, written after it, passes it on).
  std::error_code result;
  const server_address& found() const noexcept { return found_; }

 private:
  sentinel_addresses& owner_;
  std::string master_;
  bool error_ = false;
  bool unknown_ = false;
  std::size_t parts_ = 0;
  server_address found_;
};

// SENTINEL REPLICAS <name>, asked with the master's address in the same write: the replicas the
// sentinel knows of the master, each a list (RESP2) or map (RESP3) of fields; kept: where those listen
// that the sentinel does not think down (s_down, o_down), the first role_reader::max_listed of them. A
// sentinel that refuses the question (an ACL) names none: the master's address stands. Done, it passes
// the answer to both questions on.
class sentinel_addresses::replicas_query final : public request {
 public:
  static constexpr std::size_t most = 8;

  replicas_query(sentinel_addresses& owner, std::string master) : owner_(owner), master_(std::move(master)) {}

  void prepare() {
    owner_.replicas_.clear();
    key_.clear();
    pending_ = server_address{};
    down_ = false;
    field_ = 0;
  }
  void encode(resp::encoder& e) override { e.command("SENTINEL", "REPLICAS", master_); }
  void on_node(const resp::node& n) override {
    if (n.depth == 1) {
      keep_pending();
      field_ = 0;
      return;
    }
    if (n.depth != 2) return;
    if (field_++ % 2 == 0) {
      key_.assign(n.value);
      return;
    }
    if (key_ == "ip") {
      pending_.host.assign(n.value);
    } else if (key_ == "port") {
      unsigned port = 0;
      const char* end = n.value.data() + n.value.size();
      const auto [ptr, err] = std::from_chars(n.value.data(), end, port);
      pending_.port = err == std::errc() && ptr == end && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
    } else if (key_ == "flags") {
      const std::string_view flags = n.value;
      // Not "disconnected": the promotion (REPLICAOF NO ONE with CLIENT KILL) cuts the sentinels'
      // links to the replica promoted, flagged so by every sentinel for 15-55 ms (measured, Redis
      // 7.0), the very moment a new connection to the old master must expect it.
      down_ = flags.find("s_down") != std::string_view::npos || flags.find("o_down") != std::string_view::npos;
    }
  }
  void on_done(std::error_code ec) override {
    if (!ec) keep_pending();
    if (ec) owner_.replicas_.clear();
    const query& q = *owner_.query_;
    owner_.answered(q.result, q.result ? nullptr : &q.found());
  }

 private:
  void keep_pending() {
    if (!pending_.host.empty() && pending_.port != 0 && !down_ && owner_.replicas_.size() < most) {
      std::error_code not_numeric;
      asio::ip::make_address(pending_.host, not_numeric);
      pending_.numeric = !not_numeric;
      owner_.replicas_.push_back(pending_);
    }
    pending_ = server_address{};
    down_ = false;
  }

  sentinel_addresses& owner_;
  std::string master_;
  std::string key_;
  server_address pending_;
  bool down_ = false;
  std::size_t field_ = 0;
};

endpoint sentinel_endpoint(const endpoint& ep, const config& cfg) {
  endpoint out = ep;
  out.sentinels.clear();
  out.sentinel_master.clear();
  out.cluster_seeds.clear();
  out.database = 0;
  out.user = cfg.sentinel_user;
  out.password = cfg.sentinel_password;
  return out;
}

std::chrono::milliseconds sentinel_answer_bound(const config& cfg) {
  const std::chrono::milliseconds deadline = std::min(cfg.connect_timeout, cfg.command_timeout);
  return std::max(deadline / 4, std::chrono::milliseconds(1));
}

sentinel_addresses::sentinel_addresses(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                                       std::shared_ptr<sentinel_preference> preference,
                                       std::shared_ptr<const master_switch> last_switch)
    : executor_(std::move(ex)),
      sentinel_ep_(sentinel_endpoint(ep, cfg)),
      cfg_(cfg),
      sentinels_(addresses_of(ep.sentinels)),
      preference_(preference ? std::move(preference) : std::make_shared<sentinel_preference>()),
      query_(std::make_unique<query>(*this, ep.sentinel_master)),
      replicas_query_(std::make_unique<replicas_query>(*this, ep.sentinel_master)),
      last_switch_(std::move(last_switch)),
      switches_seen_(last_switch_ ? last_switch_->count : 0) {
  // A sentinel that does not answer is skipped well before the requests waiting for its answer fail
  // (the question's deadline covers connecting and logging in to it too).
  cfg_.command_timeout = sentinel_answer_bound(cfg);
  cfg_.replica_sync = replica_sync_mode::off;  // sentinels hold no locks
}

sentinel_addresses::~sentinel_addresses() {
  *alive_ = false;
  stop();
}

void sentinel_addresses::stop() noexcept {
  sink_ = nullptr;
  in_flight_ = false;
  stopped_ = true;
  if (conn_) {
    conn_->set_listener(nullptr);
    conn_->stop();
  }
}

void sentinel_addresses::next(address_sink& sink) {
  if (stopped_) return;
  if (last_switch_ && last_switch_->count != switches_seen_) {
    switches_seen_ = last_switch_->count;
    replicas_.clear();  // not asked: the announced master's replicas are not known here
    sink.on_address({}, last_switch_->to);  // ROLE still confirms it
    return;
  }
  sink_ = &sink;
  asked_ = 0;
  unknown_ = false;
  last_error_ = {};
  if (!in_flight_) ask();  // else the question in flight answers this round
}

void sentinel_addresses::ask() {
  // Each question starts at the sentinel the client prefers now: another source may have learned
  // since this round began that it is silent.
  asking_ = preference_->first % sentinels_.size();
  const server_address& sentinel = sentinels_[asking_];
  if (!conn_ || conn_->where().host != sentinel.host || conn_->where().port != sentinel.port) {
    if (conn_) {
      conn_->set_listener(nullptr);
      conn_->stop();
    }
    endpoint ep = sentinel_ep_;
    ep.host = sentinel.host;
    ep.port = sentinel.port;
    conn_ = std::make_shared<connection>(executor_, ep, cfg_, connection::role::command);
    conn_->set_listener(this);
    conn_->start();
  }
  in_flight_ = true;
  query_->prepare();
  replicas_query_->prepare();
  conn_->submit(*query_);
  conn_->submit(*replicas_query_);  // the same write: the replicas it knows, for replica sync
}

void sentinel_addresses::answered(std::error_code ec, const server_address* master) {
  if (!in_flight_) return;  // a stopped connection failing the query: nobody waits for it
  in_flight_ = false;
  if (!ec) {
    preference_->first = asking_;
    if (address_sink* sink = std::exchange(sink_, nullptr)) sink->on_address({}, *master);
    return;
  }
  if (ec == errc::unknown_master) unknown_ = true;
  last_error_ = ec;
  // This one could not say: the next sentinel, for every source of the client (unless another one
  // already moved on).
  if (preference_->first % sentinels_.size() == asking_) preference_->first = (asking_ + 1) % sentinels_.size();
  if (++asked_ < sentinels_.size() && sink_ != nullptr) {
    // Not from inside the failing connection's own callbacks.
    asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
      if (!alive.expired() && sink_ != nullptr && !in_flight_) ask();
    });
    return;
  }
  // Nobody named the master in this round. The connection backs off and asks again.
  const std::error_code why = unknown_ ? make_error_code(errc::unknown_master) : last_error_;
  if (address_sink* sink = std::exchange(sink_, nullptr)) sink->on_address(why, server_address{});
}

void sentinel_addresses::on_connect_failed(std::error_code ec) {
  // An unreachable sentinel: ask the next one now rather than at the question's deadline.
  asio::post(executor_, [this, ec, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired() || !in_flight_) return;
    request_queue unsent;
    conn_->take_unsent(unsent);
    if (unsent.pop_front() == query_.get()) answered(ec, nullptr);  // the replicas' question goes with it
  });
}

}  // namespace deadbolt::detail
