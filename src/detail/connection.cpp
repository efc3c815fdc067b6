#include "detail/connection.hpp"

#include <algorithm>
#include <chrono>
#include <string_view>

#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

std::error_code classify_login_error(std::string_view text) {
  if (starts_with(text, "WRONGPASS") || starts_with(text, "NOAUTH") ||
      text.find("invalid password") != std::string_view::npos ||
      text.find("without any password configured") != std::string_view::npos ||
      text.find("invalid username-password") != std::string_view::npos) {
    return errc::auth_failed;
  }
  if (starts_with(text, "NOPERM")) return errc::permission_denied;
  return errc::server_error;
}

bool is_unknown_hello(std::string_view text) {
  return starts_with(text, "NOPROTO") || text.find("unknown command") != std::string_view::npos;
}

}  // namespace

// One command of the login sequence; the connection owns them, the pipeline carries them.
class connection::handshake_step final : public request {
 public:
  enum class kind { hello, auth, setname, select };

  void prepare(connection* owner, kind k) {
    owner_ = owner;
    kind_ = k;
    failed_ = false;
    error_text_.clear();
  }
  kind which() const { return kind_; }
  bool failed() const { return failed_; }
  const std::string& error_text() const { return error_text_; }

  void encode(resp::encoder& e) override {
    const endpoint& ep = owner_->endpoint_;
    const std::string& name = owner_->config_.client_name;
    switch (kind_) {
      case kind::hello:
        if (!ep.password.empty()) {
          e.command("HELLO", 3, "AUTH", ep.user.empty() ? std::string_view("default") : ep.user,
                    ep.password, "SETNAME", name);
        } else {
          e.command("HELLO", 3, "SETNAME", name);
        }
        break;
      case kind::auth:
        if (ep.user.empty() || ep.user == "default") {
          e.command("AUTH", ep.password);
        } else {
          e.command("AUTH", ep.user, ep.password);
        }
        break;
      case kind::setname: e.command("CLIENT", "SETNAME", name); break;
      case kind::select: e.command("SELECT", ep.database); break;
    }
  }
  void on_node(const resp::node& n) override {
    if (n.depth == 0 && resp::is_error(n.type)) {
      failed_ = true;
      error_text_.assign(n.value);
    }
  }
  void on_done(std::error_code ec) override { owner_->handshake_reply(*this, ec); }

 private:
  connection* owner_ = nullptr;
  kind kind_ = kind::hello;
  bool failed_ = false;
  std::string error_text_;
};

connection::connection(asio::any_io_executor ex, endpoint ep, const config& cfg, role r)
    : executor_(ex),
      endpoint_(std::move(ep)),
      config_(cfg),
      role_(r),
      socket_(ex),
      connect_timer_(ex),
      deadline_timer_(ex),
      reconnect_timer_(ex),
      input_(cfg.reply_limits.max_bulk_length + 128),
      pipeline_(cfg.reply_limits),
      steps_(new handshake_step[4]) {
  if (!port::random_bytes(&jitter_state_, sizeof jitter_state_)) jitter_state_ = 0x9e3779b97f4a7c15ull;
  jitter_state_ |= 1;
}

connection::~connection() { pipeline_.fail_all(errc::shutting_down); }

std::int64_t connection::deadline_from_now() const {
  return port::monotonic_ns() +
         std::chrono::duration_cast<std::chrono::nanoseconds>(config_.command_timeout).count();
}

void connection::start() {
  if (state_ == state::idle) connect();
}

void connection::stop() {
  if (state_ == state::stopped) return;
  ++generation_;
  state_ = state::stopped;
  std::error_code ignored;
  socket_.close(ignored);
  if (resolver_) resolver_->cancel();
  connect_timer_.cancel();
  deadline_timer_.cancel();
  reconnect_timer_.cancel();
  pipeline_.fail_all(errc::shutting_down);
}

void connection::submit(request& r) {
  if (state_ == state::stopped) {
    r.on_done(errc::shutting_down);
    return;
  }
  pipeline_.submit(r, deadline_from_now());
  arm_deadline_timer();
  if (!routing_input_) flush();
}

void connection::connect() {
  state_ = state::connecting;
  candidates_.clear();
  const auto gen = generation_;
  connect_timer_.expires_after(config_.connect_timeout);
  connect_timer_.async_wait([self = shared_from_this(), gen](std::error_code ec) {
    if (ec || gen != self->generation_) return;
    if (self->state_ == state::connecting || self->state_ == state::handshaking) {
      self->drop(asio::error::timed_out);
    }
  });
  if (endpoint_.kind == endpoint::transport::unix_socket) {
    candidates_.emplace_back(asio::local::stream_protocol::endpoint(endpoint_.path));
    connect_next(0);
    return;
  }
  // A numeric address needs no resolver (and an embedded build may have none).
  std::error_code not_numeric;
  const asio::ip::address address = asio::ip::make_address(endpoint_.host, not_numeric);
  if (!not_numeric) {
    candidates_.emplace_back(asio::ip::tcp::endpoint(address, endpoint_.port));
    connect_next(0);
    return;
  }
  if (!resolver_) resolver_ = port::make_host_resolver(executor_);
  if (!resolver_) {  // config::validate() refuses host names in such a build; kept for safety
    drop(errc::no_resolver);
    return;
  }
  resolver_->async_resolve(endpoint_.host, endpoint_.port,
                           [self = shared_from_this(), gen](std::error_code ec, std::vector<asio::ip::tcp::endpoint> found) {
                             if (gen != self->generation_) return;
                             if (ec) {
                               self->drop(ec);
                               return;
                             }
                             for (const auto& entry : found) self->candidates_.emplace_back(entry);
                             self->connect_next(0);
                           });
}

void connection::connect_next(std::size_t index) {
  if (index >= candidates_.size()) {
    drop(last_error_ ? last_error_ : make_error_code(asio::error::host_not_found));
    return;
  }
  std::error_code ec;
  socket_.close(ec);
  socket_.open(candidates_[index].protocol(), ec);
  if (ec) {
    last_error_ = ec;
    connect_next(index + 1);
    return;
  }
  port::close_on_exec(socket_.native_handle());
  const auto gen = generation_;
  socket_.async_connect(candidates_[index], [self = shared_from_this(), gen, index](std::error_code ec) {
    if (gen != self->generation_) return;
    if (ec) {
      self->last_error_ = ec;
      self->connect_next(index + 1);
      return;
    }
    self->on_transport_up();
  });
}

void connection::on_transport_up() {
  if (endpoint_.kind == endpoint::transport::tcp) {
    std::error_code ignored;
    socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
  }
  state_ = state::handshaking;
  input_.clear();
  read();
  start_handshake();
}

void connection::start_handshake() {
  steps_pending_ = 0;
  auto add = [this](handshake_step::kind k) {
    handshake_step& step = steps_[steps_pending_++];
    step.prepare(this, k);
    pipeline_.submit_handshake(step, deadline_from_now());
  };
  if (!legacy_login_) {
    add(handshake_step::kind::hello);
  } else {
    if (!endpoint_.password.empty()) add(handshake_step::kind::auth);
    add(handshake_step::kind::setname);
  }
  if (endpoint_.database != 0) add(handshake_step::kind::select);
  arm_deadline_timer();
  flush();
}

void connection::handshake_reply(handshake_step& step, std::error_code ec) {
  if (ec) return;  // the connection dropped; drop() already dealt with it
  if (step.failed()) {
    switch (step.which()) {
      case handshake_step::kind::hello:
        if (is_unknown_hello(step.error_text())) {
          // A server older than Redis 6: log in the RESP2 way, on a fresh connection.
          legacy_login_ = true;
          reconnect_attempt_ = 0;
          handshake_failed(errc::protocol_error);
          return;
        }
        handshake_failed(classify_login_error(step.error_text()));
        return;
      case handshake_step::kind::auth:
        handshake_failed(classify_login_error(step.error_text()));
        return;
      case handshake_step::kind::select:
        handshake_failed(errc::invalid_config);
        return;
      case handshake_step::kind::setname:
        break;  // a name is a courtesy
    }
  }
  if (--steps_pending_ == 0 && state_ == state::handshaking) handshake_done();
}

void connection::handshake_failed(std::error_code ec) {
  steps_pending_ = 0;
  drop(ec);
  // The server's answer will not change on the next attempt: tell the waiting requests now rather
  // than at their deadline. (Reconnecting goes on, for a server that is being reconfigured.)
  if (ec == errc::auth_failed || ec == errc::permission_denied || ec == errc::invalid_config) {
    pipeline_.fail_unsent(ec);
  }
}

void connection::handshake_done() {
  connect_timer_.cancel();
  state_ = state::ready;
  protocol_ = legacy_login_ ? 2 : 3;
  reconnect_attempt_ = 0;
  last_error_ = {};
  pipeline_.end_handshake();
  pipeline_.set_push_handler(push_, role_ == role::subscriber);
  if (listener_) listener_->on_connected();
  arm_deadline_timer();
  flush();
}

void connection::read() {
  std::size_t room = 0;
  char* space = input_.prepare(room);
  if (room == 0) {
    drop(resp::error::reply_limit_exceeded);
    return;
  }
  const auto gen = generation_;
  socket_.async_read_some(asio::buffer(space, room),
                          asio::bind_allocator(handler_allocator<char>(read_memory_),
                          [self = shared_from_this(), gen](std::error_code ec, std::size_t n) {
                            if (gen != self->generation_) return;
                            if (ec) {
                              self->drop(ec);
                              return;
                            }
                            self->input_.commit(n);
                            // Requests submitted by reply callbacks are written together below.
                            self->routing_input_ = true;
                            const std::error_code bad = self->pipeline_.on_input(self->input_);
                            self->routing_input_ = false;
                            if (bad) {
                              self->drop(bad);
                              return;
                            }
                            if (gen != self->generation_) return;  // a callback dropped or stopped us
                            self->flush();  // replies may have queued requests (NOSCRIPT retries)
                            self->read();
                          }));
}

void connection::flush() {
  if (state_ != state::handshaking && state_ != state::ready) return;
  if (!pipeline_.can_write()) return;
  const std::string& bytes = pipeline_.take_output();
  const auto gen = generation_;
  asio::async_write(socket_, asio::buffer(bytes),
                    asio::bind_allocator(handler_allocator<char>(write_memory_),
                    [self = shared_from_this(), gen](std::error_code ec, std::size_t) {
                      if (gen != self->generation_) return;
                      if (ec) {
                        self->drop(ec);
                        return;
                      }
                      self->pipeline_.write_done();
                      self->flush();
                    }));
}

void connection::arm_deadline_timer() {
  const std::int64_t next = pipeline_.next_deadline();
  if (next == 0 || (deadline_armed_ns_ != 0 && deadline_armed_ns_ <= next)) return;
  deadline_armed_ns_ = next;
  deadline_timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(0, next - port::monotonic_ns())));
  deadline_timer_.async_wait([self = shared_from_this()](std::error_code ec) {
    if (ec == asio::error::operation_aborted || self->state_ == state::stopped) return;
    self->deadline_armed_ns_ = 0;
    self->on_deadline();
  });
}

void connection::on_deadline() {
  std::error_code unsent = errc::timed_out;
  if (state_ != state::ready) unsent = last_error_ ? last_error_ : make_error_code(errc::not_connected);
  if (pipeline_.expire(port::monotonic_ns(), unsent)) drop(errc::timed_out);
  arm_deadline_timer();
}

void connection::drop(std::error_code why) {
  if (state_ == state::stopped || state_ == state::waiting_to_reconnect || state_ == state::idle) return;
  const bool was_ready = state_ == state::ready;
  ++generation_;
  state_ = state::waiting_to_reconnect;
  last_error_ = why;
  std::error_code ignored;
  socket_.close(ignored);
  if (resolver_) resolver_->cancel();
  connect_timer_.cancel();
  pipeline_.set_push_handler(push_, false);
  // Requests already sent may have run: say so, unless the reason says more.
  const bool telling = why == errc::timed_out || &why.category() == &resp::resp_category();
  pipeline_.connection_lost(telling ? why : make_error_code(errc::outcome_unknown));
  if (was_ready && listener_) listener_->on_disconnected(why);
  if (state_ == state::waiting_to_reconnect) schedule_reconnect();
}

void connection::schedule_reconnect() {
  using std::chrono::milliseconds;
  const unsigned shift = std::min(reconnect_attempt_, 16u);
  const auto ceiling = std::min<std::int64_t>(config_.reconnect_max.count(),
                                              config_.reconnect_min.count() << shift);
  // Equal jitter: half fixed, half random, so that many clients do not reconnect in step.
  jitter_state_ ^= jitter_state_ << 13;
  jitter_state_ ^= jitter_state_ >> 7;
  jitter_state_ ^= jitter_state_ << 17;
  const auto half = ceiling / 2;
  const auto delay = half + static_cast<std::int64_t>(jitter_state_ % static_cast<std::uint64_t>(half + 1));
  ++reconnect_attempt_;
  if (legacy_login_ && reconnect_attempt_ == 1 && last_error_ == errc::protocol_error) {
    reconnect_timer_.expires_after(milliseconds(0));
  } else {
    reconnect_timer_.expires_after(milliseconds(delay));
  }
  const auto gen = generation_;
  reconnect_timer_.async_wait([self = shared_from_this(), gen](std::error_code ec) {
    if (ec || gen != self->generation_ || self->state_ != state::waiting_to_reconnect) return;
    self->connect();
  });
}

}  // namespace deadbolt::detail
