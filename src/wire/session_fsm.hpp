// The life of one connection as a sans-I/O state machine: find the address, resolve, connect,
// [handshake], log in, ready, and after any failure back off and start over. It decides; the
// connection (src/wire/connection.cpp) carries out its actions with a stream, a resolver, the
// pipeline and one timer, and reports what happened as events. No Asio types, no clock, no sockets:
// tests drive it directly (tests/core/session_fsm_test.cpp).
//
//   idle -> finding_address -> [resolving] -> connecting -> [handshaking] -> logging_in -> ready
//              ^                                                                          |
//              +----------------- backing_off <--- (any failure, or the timer) -----------+
//
// The timer has one meaning per state: from finding_address to logging_in it is the connect timeout,
// in backing_off it is the end of the backoff.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/server_address.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "wire/login.hpp"
#include "wire/reconnect_backoff.hpp"

namespace deadbolt::detail {

struct session_settings {
  std::int64_t connect_timeout_ms = 5000;  ///< from the start of an attempt to the end of the login
  std::int64_t reconnect_min_ms = 50;
  std::int64_t reconnect_max_ms = 2000;
  login_settings login;
  /// The stream needs a handshake after connecting (TLS).
  bool handshake = false;
};

class session_fsm {
 public:
  enum class state { idle, finding_address, resolving, connecting, handshaking, logging_in, ready, backing_off, stopped };

  struct action {
    enum class kind {
      none,          ///< nothing to do until the next event
      arm_timer,     ///< (re)start the timer for `delay_ms`, forgetting any earlier one; then on_timer()
      cancel_timer,  ///< stop the timer
      get_address,   ///< ask the address source; then on_address()
      resolve,       ///< resolve `where` (a host name); then on_resolved()
      connect,       ///< open the stream to `where` (numeric or a unix socket); then on_connected()
      handshake,     ///< run the stream's handshake, naming `where` (the address before resolving);
                     ///< then on_handshake()
      log_in,        ///< start reading and send the login_plan() steps ahead of everything else;
                     ///< then on_login_ok() / on_login_error() for each step
      ready,         ///< logged in: let the queued requests go
      disconnect,    ///< close the stream: requests already sent fail with `sent_error`; if
                     ///< `unsent_error` is set the queued ones fail with it too (waiting won't help);
                     ///< `was_ready` says whether a usable connection was lost; `error` is the cause
    };
    kind what = kind::none;
    std::int64_t delay_ms = 0;              ///< arm_timer
    const server_address* where = nullptr;  ///< resolve, connect, handshake: valid until the next event
    std::error_code error;                  ///< disconnect
    std::error_code sent_error;             ///< disconnect
    std::error_code unsent_error;           ///< disconnect
    bool was_ready = false;                 ///< disconnect
    /// disconnect: no failure: the server has no RESP3 (HELLO refused), and a RESP2 login follows at once
    bool resp2_fallback = false;
  };

  /// `jitter_seed` feeds the backoff's jitter.
  session_fsm(session_settings settings, std::uint64_t jitter_seed);

  // ---- events ----
  /// Starts the first attempt (only from idle).
  void start();
  /// For good: no more actions; the caller closes everything itself.
  void stop();
  void on_timer();
  void on_address(std::error_code ec, const server_address& where);
  /// The numeric addresses of the host, tried in order.
  void on_resolved(std::error_code ec, std::vector<server_address> found);
  void on_connected(std::error_code ec);
  void on_handshake(std::error_code ec);
  /// Step `index` of login_plan() was answered with something other than an error reply.
  void on_login_ok(std::size_t index);
  /// Step `index` of login_plan() was answered with an error reply.
  void on_login_error(std::size_t index, std::string_view error_text);
  /// The connection failed: the stream broke, the replies made no sense, or a sent request got no
  /// reply in time. Ignored when there is no connection to lose.
  void on_failure(std::error_code ec);
  /// The server moved (Sentinel announced a new master): leave the current connection or attempt
  /// with `why`, and try again at once, not after the backoff; a backoff in progress ends now.
  void on_moved(std::error_code why);

  /// The next thing to do (kind::none when there is nothing until the next event).
  action next() noexcept;

  // ---- state ----
  state current() const noexcept { return state_; }
  bool ready() const noexcept { return state_ == state::ready; }
  bool stopped() const noexcept { return state_ == state::stopped; }
  /// Bytes may go out: the login is under way or done.
  bool carries_bytes() const noexcept { return state_ == state::logging_in || state_ == state::ready; }
  /// The RESP version agreed with the server: 3 after HELLO 3, 2 on a server without HELLO.
  int protocol() const noexcept { return protocol_; }
  /// Why the last attempt failed or the last connection dropped (empty when none did since ready).
  std::error_code last_error() const noexcept { return last_error_; }
  /// What a queued request whose deadline passed fails with.
  std::error_code expired_unsent_error() const noexcept;

  /// What the address source answered for the current (or last) attempt.
  const server_address& address() const noexcept { return address_; }
  /// The login of the current attempt.
  const login_plan& plan() const noexcept { return plan_; }
  const session_settings& settings() const noexcept { return settings_; }
  void encode_login_step(std::size_t index, resp::encoder& e) const;

 private:
  void begin_attempt();
  void try_candidate(std::size_t index);
  void begin_login();
  void become_ready();
  void fail(std::error_code why, std::error_code unsent = {});
  void push(const action& a) noexcept;
  bool attempting() const noexcept;

  session_settings settings_;
  reconnect_backoff backoff_;
  state state_ = state::idle;
  server_address address_;                 // the address source's answer
  std::vector<server_address> candidates_;  // what to connect to, in order
  std::size_t candidate_ = 0;
  login_plan plan_;
  std::size_t login_pending_ = 0;
  bool resp2_only_ = false;        // the server has no HELLO: log in the RESP2 way
  bool retry_at_once_ = false;     // the next backoff is 0 (switching to the RESP2 login)
  bool falling_back_ = false;      // the next disconnect is the switch to the RESP2 login, no failure
  int protocol_ = 2;
  std::error_code last_error_;
  std::array<action, 8> queue_{};  // an event queues at most two; see push()
  std::size_t queue_head_ = 0;
  std::size_t queue_size_ = 0;
};

}  // namespace deadbolt::detail
