#include "sentinel/sentinel_addresses.hpp"

#include <string>
#include <utility>

#include "deadbolt/error.hpp"
#include "sentinel/sentinel_replies.hpp"

namespace deadbolt::detail {

// SENTINEL GET-MASTER-ADDR-BY-NAME <name>: the master's address (the replicas' question, written
// after it, passes the answer on).
class sentinel_addresses::query final : public request {
 public:
  explicit query(std::string master) : master_(std::move(master)) {}

  void prepare() {
    result = make_error_code(errc::not_connected);
    reader_.reset();
  }
  void encode(resp::encoder& e) override { e.command("SENTINEL", "GET-MASTER-ADDR-BY-NAME", master_); }
  void on_node(const resp::node& n) override { reader_.take(n); }
  void on_done(std::error_code ec) override { result = reader_.finish(ec); }
  /// Set by on_done(): the answer.
  std::error_code result;
  const server_address& found() const noexcept { return reader_.found(); }

 private:
  std::string master_;
  master_address_reader reader_;
};

// SENTINEL REPLICAS <name>, asked with the master's address in the same write. Done, it passes the
// answer to both questions on.
class sentinel_addresses::replicas_query final : public request {
 public:
  replicas_query(sentinel_addresses& owner, std::string master) : owner_(owner), master_(std::move(master)) {}

  void prepare() { reader_.reset(); }
  void encode(resp::encoder& e) override { e.command("SENTINEL", "REPLICAS", master_); }
  void on_node(const resp::node& n) override { reader_.take(n); }
  void on_done(std::error_code ec) override {
    reader_.finish(ec);
    owner_.answered();
  }
  const std::vector<server_address>& replicas() const noexcept { return reader_.replicas(); }

 private:
  sentinel_addresses& owner_;
  std::string master_;
  sentinel_replicas_reader reader_;
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

sentinel_addresses::sentinel_addresses(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                                       std::shared_ptr<sentinel_preference> preference,
                                       std::shared_ptr<const master_switch> last_switch)
    : executor_(std::move(ex)),
      sentinel_ep_(sentinel_endpoint(ep, cfg)),
      cfg_(cfg),
      sentinels_(addresses_of(ep.sentinels)),
      preference_(preference ? std::move(preference) : std::make_shared<sentinel_preference>()),
      last_switch_(std::move(last_switch)),
      core_(sentinels_.size(), *preference_, last_switch_.get()),
      query_(std::make_unique<query>(ep.sentinel_master)),
      replicas_query_(std::make_unique<replicas_query>(*this, ep.sentinel_master)) {
  // A sentinel that does not answer is skipped well before the requests waiting for its answer fail
  // (the question's deadline covers connecting and logging in to it too).
  cfg_.command_timeout = sentinel_answer_bound(cfg);
  cfg_.replica_sync = replica_sync_mode::off;  // sentinels hold no locks
}

sentinel_addresses::~sentinel_addresses() {
  *alive_ = false;
  stop();
}

void sentinel_addresses::cancel() noexcept {
  sink_ = nullptr;
  core_.cancel();
}

void sentinel_addresses::stop() noexcept {
  sink_ = nullptr;
  core_.stop();  // first: what the stopped connection fails below is no answer
  if (conn_) {
    conn_->set_listener(nullptr);
    conn_->stop();
  }
}

void sentinel_addresses::next(address_sink& sink) {
  sink_ = &sink;
  carry_out(core_.start_round());
}

void sentinel_addresses::carry_out(const sentinel_resolution::action& a) {
  using kind = sentinel_resolution::action::kind;
  switch (a.what) {
    case kind::none: return;
    case kind::ask: ask(a.sentinel); return;
    case kind::ask_soon:
      // Not from inside the failing connection's own callbacks.
      asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
        if (!alive.expired()) carry_out(core_.resume());
      });
      return;
    case kind::answer:
      if (address_sink* sink = std::exchange(sink_, nullptr)) sink->on_address({}, a.address);
      return;
    case kind::fail:
      if (address_sink* sink = std::exchange(sink_, nullptr)) sink->on_address(a.error, server_address{});
      return;
  }
}

void sentinel_addresses::ask(std::size_t index) {
  const server_address& sentinel = sentinels_[index];
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
  query_->prepare();
  replicas_query_->prepare();
  conn_->submit(*query_);
  conn_->submit(*replicas_query_);  // the same write: the replicas it knows, for replica sync
}

void sentinel_addresses::answered() {
  const std::error_code ec = query_->result;
  carry_out(ec ? core_.failed(ec) : core_.answered(query_->found(), replicas_query_->replicas()));
}

void sentinel_addresses::on_connect_failed(std::error_code ec) {
  // An unreachable sentinel: ask the next one now rather than at the question's deadline.
  asio::post(executor_, [this, ec, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired() || !core_.asking()) return;
    request_queue unsent;
    conn_->take_unsent(unsent);
    // The replicas' question goes with it.
    if (unsent.pop_front() == query_.get()) carry_out(core_.failed(ec));
  });
}

}  // namespace deadbolt::detail
