#include "wire/connection.hpp"

#include <algorithm>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "base/random.hpp"
#include "base/server_error.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "memory/post_with_memory.hpp"

namespace deadbolt::detail {
namespace {

session_settings settings_for(const endpoint& ep, const config& cfg, connection::role r) {
  session_settings s;
  s.connect_timeout_ms = cfg.connect_timeout.count();
  s.reconnect_min_ms = cfg.reconnect_min.count();
  s.reconnect_max_ms = cfg.reconnect_max.count();
  s.login.user = ep.user;
  s.login.password = ep.password;
  s.login.client_name = cfg.client_name;
  s.login.database = ep.database;
  s.login.require_master = ep.is_sentinel();  // the address came from the sentinels: confirm it
  s.login.count_replicas = r == connection::role::command && cfg.replica_sync != replica_sync_mode::off;
  s.handshake = ep.tls;
  return s;
}

connection_role public_role(connection::role r) {
  return r == connection::role::command ? connection_role::command : connection_role::subscriber;
}

sync_policy policy_of(replica_sync_mode m) {
  switch (m) {
    case replica_sync_mode::automatic: return sync_policy::automatic;
    case replica_sync_mode::on: return sync_policy::required;
    case replica_sync_mode::off: break;
  }
  return sync_policy::off;
}

}  // namespace

// One step of the login; the session says what it sends and what its reply means, the pipeline
// carries it ahead of everything queued.
class connection::login_request final : public request {
 public:
  void prepare(connection* owner, std::size_t index) {
    owner_ = owner;
    index_ = index;
    failed_ = false;
    error_text_.clear();
    is_role_ = owner->session_.plan().steps[index] == login_step::role;
    role_.reset();
  }
  void encode(resp::encoder& e) override { owner_->session_.encode_login_step(index_, e); }
  void on_node(const resp::node& n) override {
    if (is_role_) role_.take(n);
    if (n.depth == 0 && resp::is_error(n.type)) {
      failed_ = true;
      error_text_.assign(n.value);
    }
  }
  void on_done(std::error_code ec) override {
    if (ec) return;  // the connection dropped, and the session already knows
    if (is_role_) {
      owner_->roster_server(owner_->session_.address());
      owner_->pipeline_.replicas().roster().expect(owner_->addresses_->replicas_named());
      owner_->pipeline_.replicas().learned(role_, port::monotonic_ns());
      if (owner_->session_.settings().login.require_master) {
        if (!failed_ && !role_.master()) {
          failed_ = true;
          error_text_ = "not a master";
        }
      } else if (failed_) {
        failed_ = false;  // counting replicas only: an ACL that refuses ROLE leaves none known
        owner_->role_refused(error_text_);
      }
    }
    if (failed_) {
      owner_->login_refused(owner_->session_.plan().steps[index_], error_text_);
      owner_->session_.on_login_error(index_, error_text_);
    } else {
      owner_->session_.on_login_ok(index_);
    }
    owner_->pump();
  }

 private:
  connection* owner_ = nullptr;
  std::size_t index_ = 0;
  bool failed_ = false;
  bool is_role_ = false;
  role_reader role_;
  std::string error_text_;
};

// Replica sync: ROLE asked again after the login (see replica_sync), ahead of a synced command.
class connection::role_probe final : public request {
 public:
  explicit role_probe(replica_sync& sync) : sync_(sync) {}
  void encode(resp::encoder& e) override { e.command("ROLE"); }
  void on_node(const resp::node& n) override { role_.take(n); }
  void on_done(std::error_code ec) override {
    if (ec) {
      sync_.probe_failed(port::monotonic_ns());
    } else {
      sync_.learned(role_, port::monotonic_ns());
    }
    role_.reset();
  }

 private:
  replica_sync& sync_;
  role_reader role_;
};

// PING on a subscriber connection (src/wire/liveness.hpp). Done once written, like every request
// there; its answer is a push ("pong" in RESP2's subscribed mode, +PONG in RESP3) that only counts as
// something heard. Left unsent by a dropped connection, it goes out on the next one.
class connection::ping_request final : public request {
 public:
  bool queued = false;

  void encode(resp::encoder& e) override { e.command("PING"); }
  void on_node(const resp::node&) override {}
  void on_done(std::error_code) override { queued = false; }
};

// Replica sync: asks a replica that left the master (replica_roster) whether it is a master now:
// ROLE over a connection of its own, to the address the master listed, with the master's credentials
// and TLS (no ROLE at login, no replica sync, no logs or metrics of its own), closed once it has
// answered. No answer (refused, unreachable, silent until the deadline) counts as "not a master": a
// server the client cannot reach is not one it would move to. One the master never listed (only the
// sentinels named it) may be a master for another reason: the old master of a failover this master
// came from, not demoted yet. So it is asked INFO replication instead, and so is this connection's
// own server, and it counts as promoted only if it continued this master's history (promoted_from);
// without both answers (an ACL without INFO), as not promoted.
class connection::replica_check final : private connection_listener {
 public:
  explicit replica_check(connection& owner) : owner_(owner) {}
  ~replica_check() {
    *alive_ = false;
    stop();
  }
  /// Asking, or its answer not yet told to the owner.
  bool busy() const noexcept { return busy_; }

  void ask(const replica_roster::member& m) {
    stop();
    host_ = m.host;
    port_ = m.port;
    history_ = m.expected_only;
    endpoint ep = owner_.endpoint_;
    ep.kind = endpoint::transport::tcp;
    ep.host = m.host;
    ep.port = m.port;
    ep.sentinels.clear();
    ep.sentinel_master.clear();
    ep.cluster_seeds.clear();
    config cfg = owner_.config_;
    cfg.replica_sync = replica_sync_mode::off;
    cfg.log = nullptr;
    cfg.metrics = nullptr;
    conn_ = std::make_shared<connection>(owner_.executor_, ep, cfg, role::command);
    conn_->set_listener(this);
    conn_->start();
    busy_ = true;
    theirs_.prepare(history_);
    conn_->submit(theirs_);
    if (!history_) return;
    ours_.prepare(true);
    if (!ours_.queued) {  // else the one still queued from an earlier question answers this one
      ours_.queued = true;
      owner_.submit(ours_);
    }
  }
  /// Forgets the question (another server now, or shutting down): its answer is never told.
  void stop() noexcept {
    ++generation_;
    busy_ = false;
    theirs_.waited = ours_.waited = false;
    close();
  }

 private:
  // ROLE, or INFO replication, to one server; `waited` while the check needs its answer.
  class question final : public request {
   public:
    explicit question(replica_check& check) : check_(check) {}
    void prepare(bool history) {
      history_ = history;
      waited = true;
      failed = false;
      role.reset();
      info = replication_info{};
    }
    void encode(resp::encoder& e) override {
      if (history_) e.command("INFO", "replication");
      else e.command("ROLE");
    }
    void on_node(const resp::node& n) override {
      if (!history_) return role.take(n);
      if (n.depth == 0 && !resp::is_error(n.type)) info = parse_replication_info(n.value);
    }
    void on_done(std::error_code ec) override {
      queued = false;
      if (!waited) return;
      waited = false;
      failed = static_cast<bool>(ec);
      check_.answer_in(ec);
    }
    bool waited = false;
    bool queued = false;  // submitted to a connection that has not answered it yet (ours_ only)
    bool failed = false;
    role_reader role;
    replication_info info;

   private:
    replica_check& check_;
    bool history_ = false;
  };

  void on_connected() override {}
  void on_disconnected(std::error_code) override {}
  void on_connect_failed(std::error_code ec) override {
    if (!theirs_.waited) return;
    theirs_.waited = false;
    theirs_.failed = true;
    answer_in(ec);
  }

  void close() noexcept {
    if (!conn_) return;
    conn_->set_listener(nullptr);
    conn_->stop();  // fails the question if it is still queued: no longer waited for, so ignored
    conn_.reset();
  }
  // One of the answers is in (or failed): once every answer the check needs is, decide.
  void answer_in(std::error_code ec) {
    if (ec) error_ = ec;
    if (theirs_.waited || ours_.waited) return;
    const bool master = history_ ? !theirs_.failed && !ours_.failed && promoted_from(theirs_.info, ours_.info)
                                 : !theirs_.failed && !theirs_.role.error() && theirs_.role.master();
    const std::error_code why = theirs_.failed ? error_ : std::error_code();
    error_ = {};
    // Not from inside the asked connection's own callbacks: it is closed here.
    asio::post(owner_.executor_, [this, why, master, gen = generation_, alive = std::weak_ptr<bool>(alive_)] {
      if (alive.expired() || gen != generation_) return;
      busy_ = false;
      close();
      owner_.replica_answered(host_, port_, master, why);
    });
  }

  connection& owner_;
  std::shared_ptr<connection> conn_;  // to the replica asked
  question theirs_{*this};            // to it
  question ours_{*this};              // to the owner's own server (INFO replication only)
  std::string host_;
  std::uint16_t port_ = 0;
  bool history_ = false;
  bool busy_ = false;
  std::error_code error_;
  std::uint64_t generation_ = 0;   // bumps on every stop: a posted answer of an older question is dropped
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted handlers check it
};

connection::connection(asio::any_io_executor ex, endpoint ep, const config& cfg, role r)
    : connection(ex, ep, std::make_unique<static_addresses>(std::vector<server_address>{address_of(ep)}), cfg, r) {}

connection::connection(asio::any_io_executor ex, endpoint ep, std::unique_ptr<address_source> addresses,
                       const config& cfg, role r)
    : executor_(ex),
      endpoint_(std::move(ep)),
      config_(cfg),
      role_(r),
      session_(settings_for(endpoint_, config_, r), random_seed()),
      addresses_(std::move(addresses)),
      stream_(ex, endpoint_.tls ? endpoint_.tls_context : nullptr),
      session_timer_(ex),
      deadline_timer_(ex),
      input_(cfg.reply_limits.max_bulk_length + 128),
      pipeline_(cfg.reply_limits),
      login_steps_(new login_request[login_plan{}.steps.size()]),
      role_probe_(std::make_unique<role_probe>(pipeline_.replicas())),
      liveness_(r == role::subscriber ? std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.ping_interval).count() : 0,
                std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.ping_timeout).count()),
      liveness_timer_(ex),
      observe_(cfg),
      described_(std::string(to_string(public_role(r))) + " connection to " + endpoint_.describe()) {
  if (r == role::command) pipeline_.replicas().configure(policy_of(cfg.replica_sync), cfg.replica_sync_timeout.count());
  pipeline_.set_error_listener(this);
}

connection::~connection() { pipeline_.fail_all(errc::shutting_down); }

std::int64_t connection::command_timeout_ns() const {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(config_.command_timeout).count();
}

std::int64_t connection::deadline_from_now() const { return port::monotonic_ns() + command_timeout_ns(); }

void connection::start() {
  session_.start();
  pump();
}

void connection::stop() {
  if (session_.stopped()) return;
  if (replica_check_) replica_check_->stop();
  session_.stop();
  ++generation_;
  ++timer_generation_;
  stream_.close();
  if (resolver_) resolver_->cancel();
  addresses_->stop();
  session_timer_.cancel();
  deadline_timer_.cancel();
  liveness_.stop();
  ++liveness_generation_;
  liveness_timer_.cancel();
  pipeline_.fail_all(errc::shutting_down);
}

void connection::submit(request& r) {
  if (session_.stopped()) {
    r.on_done(errc::shutting_down);
    return;
  }
  const std::int64_t now = port::monotonic_ns();
  const std::int64_t deadline = now + command_timeout_ns();
  if (r.syncs_replicas) {
    replica_sync& sync = pipeline_.replicas();
    if (session_.ready() && sync.probe_due(now)) {  // else the login asks
      sync.probe_sent();
      pipeline_.submit(*role_probe_, deadline);
    }
  }
  pipeline_.submit(r, deadline);
  arm_deadline_timer();
  if (!routing_input_) flush_soon();
}

// Outside the read handler (which flushes once it has routed every reply), the first request of a turn
// of the loop is written at once, and those submitted after it in the same turn (a thousand locks
// started in a row) are written together by one posted flush.
void connection::flush_soon() {
  if (flush_posted_) return;
  flush();
  if (role_ != role::command || !session_.carries_bytes()) return;  // else writes batch as before
  flush_posted_ = true;
  post_with_memory(executor_, flush_memory_, [self = shared_from_this()] {
    self->flush_posted_ = false;
    self->flush();
  });
}

void connection::drop(std::error_code why) {
  session_.on_failure(why);
  pump();
}

void connection::reconnect_now(std::error_code why) {
  session_.on_moved(why);
  pump();
}

void connection::pump() {
  if (pumping_) return;  // the loop below runs what this event queued
  pumping_ = true;
  for (auto a = session_.next(); a.what != session_fsm::action::kind::none; a = session_.next()) perform(a);
  pumping_ = false;
}

void connection::perform(const session_fsm::action& a) {
  using kind = session_fsm::action::kind;
  switch (a.what) {
    case kind::none: return;
    case kind::arm_timer: arm_timer(a.delay_ms); return;
    case kind::cancel_timer:
      ++timer_generation_;
      session_timer_.cancel();
      return;
    case kind::get_address:
      address_asked_ns_ = port::monotonic_ns();
      addresses_->next(*this);
      return;
    case kind::resolve: resolve(*a.where); return;
    case kind::connect: connect(*a.where); return;
    case kind::handshake:
      stream_.async_handshake(*a.where, io_done(&connection::handshake_finished, shared_from_this(), generation_, read_memory_));
      return;
    case kind::log_in: log_in(); return;
    case kind::ready: on_ready(); return;
    case kind::disconnect: disconnect(a); return;
  }
}

void connection::on_error_reply(const request& r, std::string_view error_text) {
  // The login's own steps are judged by the session (a refused ROLE is an ACL user's right).
  if (&r == role_probe_.get()) return;
  for (std::size_t i = 0; i < login_plan{}.steps.size(); ++i) {
    if (&r == &login_steps_[i]) return;
  }
  // The request's error code says what kind of error it was; the server's words say which.
  const std::error_code ec = server_error_code(error_text);
  observe_.log(ec == errc::server_busy ? log_level::debug : log_level::warning, described_, ": ", ec, ": ",
               error_text);
}

void connection::login_refused(login_step step, std::string_view error_text) {
  // The server's own words: the session keeps only what they mean (an error code). A server without
  // HELLO, or one that refuses a name, is no failure.
  const bool expected = (step == login_step::hello && is_unknown_hello(error_text)) || step == login_step::setname;
  observe_.log(expected ? log_level::debug : log_level::warning, described_, ": login refused at ", command_of(step), ": ",
               error_text);
}

void connection::on_wait_refused(std::string_view error_text, bool sync_off) {
  observe_.log(log_level::warning, described_, ": WAIT refused (", error_text, "): ",
               sync_off ? "replica sync is off on this connection until it logs in again; holds written here "
                          "are not checked against replicas"
                        : "replica sync is required, so every hold written here counts as not synced");
}

void connection::role_refused(std::string_view error_text) {
  // Required sync WAITs anyway; automatic WAITs only where ROLE listed replicas, so it does not here.
  if (pipeline_.replicas().policy() != sync_policy::automatic) return;
  observe_.log(log_level::warning, described_, ": ROLE refused (", error_text,
               "): no replica is known, so replica sync does not WAIT on this connection; holds written here "
               "are not checked against replicas");
}

void connection::on_address(std::error_code ec, const server_address& where) {
  session_.on_address(ec, where);
  pump();
}

void connection::resolve(const server_address& where) {
  if (!resolver_) resolver_ = port::make_host_resolver(executor_);
  if (!resolver_) {  // config::validate() refuses host names in such a build; kept for safety
    session_.on_resolved(errc::no_resolver, {});
    return;
  }
  resolver_->async_resolve(where.host, where.port,
                           [self = shared_from_this(), gen = generation_](std::error_code ec,
                                                                         std::vector<asio::ip::tcp::endpoint> found) {
                             if (gen != self->generation_) return;
                             if (!ec && found.empty()) ec = asio::error::host_not_found;
                             std::vector<server_address> candidates(found.size());
                             for (std::size_t i = 0; i < found.size(); ++i) {
                               candidates[i].host = found[i].address().to_string();
                               candidates[i].port = found[i].port();
                               candidates[i].numeric = true;
                             }
                             self->session_.on_resolved(ec, std::move(candidates));
                             self->pump();
                           });
}

void connection::connect(const server_address& where) {
  const std::error_code not_started =
      stream_.async_connect(where, [self = shared_from_this(), gen = generation_](std::error_code ec) {
        if (gen != self->generation_) return;
        self->session_.on_connected(ec);
        self->pump();
      });
  if (not_started) session_.on_connected(not_started);
}

void connection::log_in() {
  input_.clear();
  read();
  const login_plan& plan = session_.plan();
  for (std::size_t i = 0; i < plan.size; ++i) {
    login_steps_[i].prepare(this, i);
    pipeline_.submit_handshake(login_steps_[i], deadline_from_now());
  }
  arm_deadline_timer();
  flush();
}

void connection::on_ready() {
  if (const metrics_calls* m = observe_.metrics(); m && been_ready_) m->on_reconnect(public_role(role_));
  observe_.log(log_level::info, described_, been_ready_ ? ": up again" : ": up");
  been_ready_ = true;
  pipeline_.end_handshake();
  pipeline_.set_push_handler(push_, role_ == role::subscriber);
  if (liveness_.enabled()) {
    liveness_.start(port::monotonic_ns());
    arm_liveness_timer();
  }
  if (listener_) listener_->on_connected();
  arm_deadline_timer();
  flush();
}

void connection::disconnect(const session_fsm::action& a) {
  ++generation_;
  stream_.close();
  if (resolver_) resolver_->cancel();
  addresses_->cancel();
  liveness_.stop();
  ++liveness_generation_;
  liveness_timer_.cancel();
  pipeline_.set_push_handler(push_, false);
  pipeline_.connection_lost(a.sent_error);
  if (const metrics_calls* m = observe_.metrics(); m && a.was_ready) m->on_disconnect(public_role(role_), a.error);
  if (a.resp2_fallback) {
    // Not a failure (the owner need not hear of it): the server has no RESP3; logging in again at once.
    observe_.log(log_level::info, described_, ": HELLO refused (no RESP3): logging in with RESP2");
    return;
  }
  observe_.log(log_level::warning, described_, a.was_ready ? ": lost: " : ": failed: ", a.error);
  if (listener_) {
    if (a.was_ready) {
      listener_->on_disconnected(a.error);
    } else if (!session_.stopped()) {
      listener_->on_connect_failed(a.error);
    }
  }
  if (a.unsent_error) pipeline_.fail_unsent(a.unsent_error);
}

void connection::arm_timer(std::int64_t delay_ms) {
  const auto token = ++timer_generation_;
  session_timer_.expires_after(std::chrono::milliseconds(delay_ms));
  session_timer_.async_wait([self = shared_from_this(), token](std::error_code ec) {
    if (ec || token != self->timer_generation_) return;
    self->session_.on_timer();
    self->pump();
  });
}

void connection::read() {
  std::size_t room = 0;
  char* space = input_.prepare(room);
  if (room == 0) {
    drop(resp::error::reply_limit_exceeded);
    return;
  }
  stream_.async_read_some(asio::buffer(space, room), io_done(&connection::read_finished, shared_from_this(), generation_, read_memory_));
}

void connection::flush() {
  while (session_.carries_bytes() && pipeline_.can_write()) {
    const std::string& bytes = pipeline_.take_output();
    // Most batches fit the socket's buffer and are written here: waiting for the write to complete
    // would cost a handler and a reactor turn per round trip. Not on a subscriber connection, whose
    // requests are answered by their write (write_done() runs their callbacks, which must not run
    // inside submit()).
    const std::size_t written = role_ == role::command ? stream_.write_now(asio::buffer(bytes)) : 0;
    if (written == bytes.size()) {
      pipeline_.write_done();
      continue;
    }
    stream_.async_write(asio::buffer(bytes) + written,
                        io_done(&connection::write_finished, shared_from_this(), generation_, write_memory_));
    return;
  }
}

void connection::handshake_finished(void* target, std::uint64_t gen, std::error_code ec, std::size_t) {
  auto* self = static_cast<connection*>(target);
  if (gen != self->generation_) return;
  self->session_.on_handshake(ec);
  self->pump();
}

void connection::read_finished(void* target, std::uint64_t gen, std::error_code ec, std::size_t n) {
  auto* self = static_cast<connection*>(target);
  if (gen != self->generation_) return;
  if (ec) {
    // Closed (or reset, with our login unread) before answering the login: on a plain stream, most
    // likely a TLS port.
    const bool closed = ec == asio::error::eof || ec == asio::error::connection_reset;
    const bool unanswered = closed && !self->endpoint_.tls && self->session_.current() == session_fsm::state::logging_in;
    self->drop(unanswered ? make_error_code(errc::closed_during_login) : ec);
    return;
  }
  self->input_.commit(n);
  if (self->liveness_.running()) self->liveness_.heard(port::monotonic_ns());
  // Requests submitted by reply callbacks are written together below.
  self->routing_input_ = true;
  const std::error_code bad = self->pipeline_.on_input(self->input_);
  self->routing_input_ = false;
  if (bad) {
    self->drop(bad);
    return;
  }
  if (gen != self->generation_) return;  // a callback dropped or stopped us
  self->ask_departed_replica();  // a ROLE answered may have found one gone
  self->flush();  // replies may have queued requests (NOSCRIPT retries)
  self->read();
}

void connection::roster_server(const server_address& server) {
  // The replicas the roster knows are this server's: kept across reconnects to it (one that left it
  // still counts), forgotten for another.
  if (server == roster_of_) return;
  pipeline_.replicas().roster().clear();
  roster_of_ = server;
  if (replica_check_) replica_check_->stop();
}

void connection::replicas_renamed() {
  // Not logged in to this server yet: the login's ROLE step expects them.
  if (roster_of_.port == 0 || !(roster_of_ == session_.address())) return;
  pipeline_.replicas().roster().expect(addresses_->replicas_named());
  ask_departed_replica();
}

void connection::ask_departed_replica() {
  replica_roster& roster = pipeline_.replicas().roster();
  if (roster.trusted() || (replica_check_ && replica_check_->busy()) || session_.stopped()) return;
  const replica_roster::member* m = roster.ask_due(port::monotonic_ns());
  if (m == nullptr) return;
  if (!replica_check_) replica_check_ = std::make_unique<replica_check>(*this);
  observe_.log(log_level::debug, described_, ": replica ", m->host, ":", m->port,
               " is not listed by the master (any more): asking it whether it is a master now; until it "
               "answers, holds written here are not counted as synced");
  replica_check_->ask(*m);
}

void connection::replica_answered(const std::string& host, std::uint16_t port, bool master, std::error_code why) {
  pipeline_.replicas().roster().answered(host, port, master, port::monotonic_ns());
  if (master) {
    observe_.log(log_level::warning, described_, ": replica ", host, ":", port,
                 " left this master and is a master now (promoted: a failover under way?): holds written here "
                 "count as not synced until it is this master's replica again or the client moves to the new "
                 "master");
  } else {
    observe_.log(log_level::info, described_, ": replica ", host, ":", port,
                 " is not listed by this master, and was not promoted from it",
                 why ? " (it did not answer: " : "", why ? why.message() : std::string(), why ? ")" : "");
  }
  ask_departed_replica();  // another one may be due
}

void connection::write_finished(void* target, std::uint64_t gen, std::error_code ec, std::size_t) {
  auto* self = static_cast<connection*>(target);
  if (gen != self->generation_) return;
  if (ec) {
    self->drop(ec);
    return;
  }
  self->pipeline_.write_done();
  self->flush();
}

void connection::arm_deadline_timer() {
  const std::int64_t next = pipeline_.next_deadline();
  if (next == 0 || (deadline_armed_ns_ != 0 && deadline_armed_ns_ <= next)) return;
  deadline_armed_ns_ = next;
  deadline_timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(0, next - port::monotonic_ns())));
  // Re-arming for an earlier deadline (a plain request behind a replica-synced one, whose deadline
  // allows for its WAIT) cancels a wait whose handler is still pending: two blocks take turns.
  handler_memory& memory = deadline_memory_[0].in_use() ? deadline_memory_[1] : deadline_memory_[0];
  deadline_timer_.async_wait(asio::bind_allocator(handler_allocator<char>(memory),
                                                  [self = shared_from_this()](std::error_code ec) {
                                                    if (ec == asio::error::operation_aborted || self->session_.stopped()) return;
                                                    self->deadline_armed_ns_ = 0;
                                                    self->on_deadline();
                                                  }));
}

void connection::arm_liveness_timer() {
  const std::int64_t at = liveness_.next_check();
  if (at == 0) return;
  const auto token = ++liveness_generation_;
  liveness_timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(0, at - port::monotonic_ns())));
  liveness_timer_.async_wait([self = shared_from_this(), token](std::error_code ec) {
    if (ec || token != self->liveness_generation_ || self->session_.stopped()) return;
    self->on_liveness_timer();
  });
}

void connection::on_liveness_timer() {
  switch (liveness_.check(port::monotonic_ns())) {
    case liveness::verdict::wait: break;
    case liveness::verdict::ping:
      if (!ping_) ping_ = std::make_unique<ping_request>();
      if (!ping_->queued) {
        ping_->queued = true;
        submit(*ping_);
      }
      break;
    case liveness::verdict::dead:
      // Silent since the PING: the server is paused, hung or cut off. Reconnecting (the listener
      // subscribes again) is the only way to hear from it, or from whoever replaced it, again.
      observe_.log(log_level::warning, described_, ": no answer to PING within ping_timeout");
      drop(errc::timed_out);
      return;
  }
  arm_liveness_timer();
}

void connection::on_deadline() {
  if (pipeline_.expire(port::monotonic_ns(), session_.expired_unsent_error())) drop(errc::timed_out);
  arm_deadline_timer();
}

}  // namespace deadbolt::detail
