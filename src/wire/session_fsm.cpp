#include "wire/session_fsm.hpp"

#include <cerrno>
#include <cstdlib>
#include <utility>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/error.hpp"
#include "wire/tls_failures.hpp"

namespace deadbolt::detail {
namespace {

session_fsm::action make(session_fsm::action::kind what) {
  session_fsm::action a;
  a.what = what;
  return a;
}

// What Asio reports for a timed-out socket operation (asio::error::timed_out), without Asio.
std::error_code connect_timed_out() { return {ETIMEDOUT, std::system_category()}; }

// Requests already written may have run when the connection goes: they fail with outcome_unknown,
// unless the cause says more (they timed out, or their reply was malformed).
std::error_code sent_request_error(std::error_code why) {
  if (why == errc::timed_out || &why.category() == &resp::resp_category()) return why;
  return errc::outcome_unknown;
}

}  // namespace

session_fsm::session_fsm(session_settings settings, std::uint64_t jitter_seed)
    : settings_(std::move(settings)),
      backoff_(settings_.reconnect_min_ms, settings_.reconnect_max_ms, jitter_seed) {}

void session_fsm::push(const action& a) noexcept {
  // Between two next() calls an event queues at most two actions, and an event that arrives while
  // the driver carries out an action adds at most two more: eight is never reached.
  if (queue_size_ == queue_.size()) std::abort();
  queue_[(queue_head_ + queue_size_) % queue_.size()] = a;
  ++queue_size_;
}

session_fsm::action session_fsm::next() noexcept {
  if (queue_size_ == 0) return {};
  const action a = queue_[queue_head_];
  queue_head_ = (queue_head_ + 1) % queue_.size();
  --queue_size_;
  return a;
}

bool session_fsm::attempting() const noexcept {
  switch (state_) {
    case state::finding_address:
    case state::resolving:
    case state::connecting:
    case state::handshaking:
    case state::logging_in: return true;
    case state::idle:
    case state::ready:
    case state::backing_off:
    case state::stopped: return false;
  }
  return false;
}

void session_fsm::start() {
  if (state_ == state::idle) begin_attempt();
}

void session_fsm::stop() {
  state_ = state::stopped;
  queue_size_ = 0;
}

void session_fsm::begin_attempt() {
  state_ = state::finding_address;
  candidates_.clear();
  candidate_ = 0;
  action timer = make(action::kind::arm_timer);
  timer.delay_ms = settings_.connect_timeout_ms;
  push(timer);
  push(make(action::kind::get_address));
}

void session_fsm::on_timer() {
  if (state_ == state::handshaking) {
    fail(errc::tls_handshake_timed_out);  // says more than a timeout: most likely no TLS on that port
  } else if (attempting()) {
    fail(connect_timed_out());
  } else if (state_ == state::backing_off) {
    begin_attempt();
  }
}

void session_fsm::on_address(std::error_code ec, const server_address& where) {
  if (state_ != state::finding_address) return;
  if (ec) {
    fail(ec);
    return;
  }
  address_ = where;
  if (where.kind == server_address::transport::unix_socket || where.numeric) {
    candidates_.push_back(where);
    try_candidate(0);
    return;
  }
  state_ = state::resolving;
  action a = make(action::kind::resolve);
  a.where = &address_;
  push(a);
}

void session_fsm::on_resolved(std::error_code ec, std::vector<server_address> found) {
  if (state_ != state::resolving) return;
  if (ec) {
    fail(ec);
    return;
  }
  candidates_ = std::move(found);
  try_candidate(0);
}

void session_fsm::try_candidate(std::size_t index) {
  if (index >= candidates_.size()) {
    // Every address refused (last_error_ is the last refusal), or the resolver found none.
    fail(last_error_ ? last_error_ : make_error_code(errc::not_connected));
    return;
  }
  state_ = state::connecting;
  candidate_ = index;
  action a = make(action::kind::connect);
  a.where = &candidates_[index];
  push(a);
}

void session_fsm::on_connected(std::error_code ec) {
  if (state_ != state::connecting) return;
  if (ec) {
    last_error_ = ec;
    try_candidate(candidate_ + 1);
    return;
  }
  if (settings_.handshake) {
    state_ = state::handshaking;
    action a = make(action::kind::handshake);
    a.where = &address_;
    push(a);
    return;
  }
  begin_login();
}

void session_fsm::on_handshake(std::error_code ec) {
  if (state_ != state::handshaking) return;
  if (ec) {
    // A certificate the server or we refuse will be refused again: the queued requests hear it now.
    fail(ec, is_permanent_tls_failure(ec) ? ec : std::error_code());
    return;
  }
  begin_login();
}

void session_fsm::begin_login() {
  state_ = state::logging_in;
  plan_ = plan_login(settings_.login, resp2_only_);
  login_pending_ = plan_.size;
  push(make(action::kind::log_in));
}

void session_fsm::encode_login_step(std::size_t index, resp::encoder& e) const {
  if (index < plan_.size) encode_login_command(plan_.steps[index], settings_.login, e);
}

void session_fsm::on_login_ok(std::size_t index) {
  if (state_ != state::logging_in || index >= plan_.size) return;
  if (--login_pending_ == 0) become_ready();
}

void session_fsm::on_login_error(std::size_t index, std::string_view error_text) {
  if (state_ != state::logging_in || index >= plan_.size) return;
  switch (plan_.steps[index]) {
    case login_step::hello:
      if (is_unknown_hello(error_text)) {
        // A server older than Redis 6: log in the RESP2 way, on a fresh connection, at once.
        resp2_only_ = true;
        backoff_.reset();
        retry_at_once_ = true;
        falling_back_ = true;
        fail(errc::protocol_error);
        return;
      }
      [[fallthrough]];
    case login_step::auth: {
      const std::error_code ec = classify_login_error(error_text);
      // The answer will not change on the next attempt: the queued requests hear it now rather than
      // at their deadline. (Attempts go on, for a server that is being reconfigured.)
      fail(ec, is_permanent_login_failure(ec) ? ec : std::error_code());
      return;
    }
    case login_step::select:
      fail(errc::invalid_config, errc::invalid_config);
      return;
    case login_step::role:
      // A replica, or a master that a failover is demoting: the address source (the sentinels) is
      // asked again after the backoff.
      fail(errc::not_master);
      return;
    case login_step::setname:
      on_login_ok(index);  // a name is a courtesy
      return;
  }
}

void session_fsm::become_ready() {
  state_ = state::ready;
  protocol_ = resp2_only_ ? 2 : 3;
  backoff_.reset();
  last_error_ = {};
  push(make(action::kind::cancel_timer));
  push(make(action::kind::ready));
}

void session_fsm::on_failure(std::error_code ec) {
  // TLS 1.3 finishes the client's handshake before the server checks the client's certificate: a
  // refusal arrives as an alert on the first read, during the login. It is as permanent as any.
  if (state_ == state::logging_in && is_permanent_tls_failure(ec)) {
    fail(ec, ec);
  } else if (attempting() || state_ == state::ready) {
    fail(ec);
  }
}

void session_fsm::on_moved(std::error_code why) {
  if (state_ == state::backing_off) {
    backoff_.reset();
    begin_attempt();
  } else if (attempting() || state_ == state::ready) {
    backoff_.reset();
    retry_at_once_ = true;
    fail(why);
  }
}

void session_fsm::fail(std::error_code why, std::error_code unsent) {
  action a = make(action::kind::disconnect);
  a.was_ready = state_ == state::ready;
  a.error = why;
  a.sent_error = sent_request_error(why);
  a.unsent_error = unsent;
  a.resp2_fallback = falling_back_;
  falling_back_ = false;
  state_ = state::backing_off;
  last_error_ = why;
  login_pending_ = 0;
  push(a);
  action timer = make(action::kind::arm_timer);
  timer.delay_ms = backoff_.next_delay_ms();
  if (retry_at_once_) {
    retry_at_once_ = false;
    timer.delay_ms = 0;
  }
  push(timer);
}

std::error_code session_fsm::expired_unsent_error() const noexcept {
  if (state_ == state::ready) return errc::timed_out;
  return last_error_ ? last_error_ : make_error_code(errc::not_connected);
}

}  // namespace deadbolt::detail
