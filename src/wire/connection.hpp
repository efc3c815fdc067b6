// One connection to the server, kept alive. The decisions (where to, how to log in, what a failure
// means, when to try again) are the session state machine's (src/wire/session_fsm.hpp); this is its
// driver: it carries out the machine's actions with a stream, a resolver, one timer and the pipeline,
// reports what happened back as events, and fails requests whose deadline passes. A subscriber
// connection, which sends nothing of its own after SUBSCRIBE, also checks that its server is alive
// (src/wire/liveness.hpp: PING after config::ping_interval of silence, dropped after ping_timeout).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "base/observer.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "deadbolt/port/resolver.hpp"
#include "deadbolt/resp/read_buffer.hpp"
#include "memory/handler_memory.hpp"
#include "pipeline/pipeline.hpp"
#include "wire/address_source.hpp"
#include "wire/liveness.hpp"
#include "wire/session_fsm.hpp"
#include "wire/stream.hpp"

namespace deadbolt::detail {

/// Told when the connection becomes usable and when it drops.
class connection_listener {
 public:
  virtual void on_connected() = 0;
  virtual void on_disconnected(std::error_code why) = 0;
  /// An attempt to connect (or log in) failed; the connection tries again after its backoff.
  virtual void on_connect_failed(std::error_code) {}

 protected:
  ~connection_listener() = default;
};

class connection final : public std::enable_shared_from_this<connection>, private address_sink,
                         private error_reply_listener {
 public:
  enum class role { command, subscriber };

  /// Connects to `ep` (and only there), logging in with its credentials and database.
  connection(asio::any_io_executor ex, endpoint ep, const config& cfg, role r);
  /// Asks `addresses` before every connect; logs in with `ep`'s credentials and database.
  connection(asio::any_io_executor ex, endpoint ep, std::unique_ptr<address_source> addresses,
             const config& cfg, role r);
  ~connection();

  /// Starts connecting; keeps reconnecting until stop().
  void start();
  /// Closes for good: every queued request fails with errc::shutting_down.
  void stop();

  /// Queues a request; it is written as soon as the connection is ready. Must run on the executor.
  void submit(request& r);

  bool ready() const noexcept { return session_.ready(); }
  /// Nothing queued and nothing awaiting a reply.
  bool idle() const noexcept { return pipeline_.idle(); }
  /// Why the last connection attempt failed or the last connection dropped (empty when none did).
  std::error_code last_error() const noexcept { return session_.last_error(); }
  const endpoint& where() const noexcept { return endpoint_; }
  /// The server the address source named for the current (or last) attempt.
  const server_address& server() const noexcept { return session_.address(); }
  /// When the address source was last asked (monotonic ns; 0: never): the ready connection's server
  /// was named no earlier than that.
  std::int64_t address_asked_ns() const noexcept { return address_asked_ns_; }
  /// Hands over the requests not yet written (see pipeline::take_unsent).
  void take_unsent(request_queue& out) { pipeline_.take_unsent(out); }
  /// Drops the current connection as if the network failed (tests, and stuck-connection recovery).
  void drop(std::error_code why);
  /// The server moved: drops the connection (or attempt) and connects again at once, asking the
  /// address source anew, even if it was waiting out a backoff.
  void reconnect_now(std::error_code why);

  /// The address source names other replicas now (a cluster's new layout): replica sync expects them
  /// of the server this connection is logged in to, and asks at once after one its listing lacked.
  void replicas_renamed();

  void set_listener(connection_listener* l) noexcept { listener_ = l; }
  void set_push_handler(push_handler* h) noexcept { push_ = h; }
  /// Cluster: redirections go to `h` (see pipeline::set_redirect_handler).
  void set_redirect_handler(redirect_handler* h) noexcept { pipeline_.set_redirect_handler(h); }
  /// The RESP version the server agreed to (3 after HELLO 3, else 2).
  int protocol() const noexcept { return session_.protocol(); }

 private:
  class login_request;
  class role_probe;
  class ping_request;
  class replica_check;

  void pump();
  void perform(const session_fsm::action& a);
  void on_address(std::error_code ec, const server_address& where) override;
  void on_error_reply(const request& r, std::string_view error_text) override;
  void login_refused(login_step step, std::string_view error_text);
  void on_wait_refused(std::string_view error_text, bool sync_off) override;
  // The login's ROLE was refused where it only counts replicas (an ACL, a renamed command).
  void role_refused(std::string_view error_text);
  void resolve(const server_address& where);
  void connect(const server_address& where);
  void log_in();
  void on_ready();
  void disconnect(const session_fsm::action& a);
  void arm_timer(std::int64_t delay_ms);
  void read();
  void flush();
  // The stream's completions (io_done: one concrete type, which a secure layer can take too).
  static void handshake_finished(void* self, std::uint64_t generation, std::error_code ec, std::size_t);
  static void read_finished(void* self, std::uint64_t generation, std::error_code ec, std::size_t bytes);
  static void write_finished(void* self, std::uint64_t generation, std::error_code ec, std::size_t);
  void flush_soon();
  void arm_deadline_timer();
  void on_deadline();
  std::int64_t command_timeout_ns() const;
  std::int64_t deadline_from_now() const;
  void arm_liveness_timer();
  void on_liveness_timer();
  // Replica sync: the login's ROLE answered (`server` is where it runs); a replica that left the
  // master is due to be asked whether it is a master now (replica_roster), or has answered.
  void roster_server(const server_address& server);
  void ask_departed_replica();
  void replica_answered(const std::string& host, std::uint16_t port, bool master, std::error_code why);

  asio::any_io_executor executor_;
  endpoint endpoint_;
  config config_;
  role role_;
  session_fsm session_;
  std::unique_ptr<address_source> addresses_;
  stream stream_;
  std::unique_ptr<port::host_resolver> resolver_;  // made on the first host name (none for addresses)
  asio::steady_timer session_timer_;               // the session's one timer (connect timeout, backoff)
  asio::steady_timer deadline_timer_;              // the earliest request deadline
  std::int64_t deadline_armed_ns_ = 0;
  resp::read_buffer input_;
  handler_memory read_memory_;   // the one read in flight
  handler_memory write_memory_;  // the one write in flight
  handler_memory flush_memory_;  // the one posted flush (flush_soon)
  handler_memory deadline_memory_[2];  // the deadline timer's wait, and a cancelled one still pending
  pipeline pipeline_;
  std::unique_ptr<login_request[]> login_steps_;
  std::unique_ptr<role_probe> role_probe_;
  std::unique_ptr<replica_check> replica_check_;  // made when a replica first leaves the master
  server_address roster_of_;                      // the server the roster's replicas belong to
  liveness liveness_;                       // subscriber connections only (else never started)
  asio::steady_timer liveness_timer_;
  std::uint64_t liveness_generation_ = 0;   // bumps on every arm or stop of liveness_timer_
  std::unique_ptr<ping_request> ping_;      // made with the first PING
  std::int64_t address_asked_ns_ = 0;
  bool pumping_ = false;        // inside pump(): events from actions queue more actions, run after
  bool routing_input_ = false;  // inside pipeline_.on_input(): the read handler flushes afterwards
  bool flush_posted_ = false;   // flush_soon() has a flush posted: submits until then wait for it
  std::uint64_t generation_ = 0;  // bumps on every disconnect: stale completions are ignored
  std::uint64_t timer_generation_ = 0;  // bumps on every arm or cancel of session_timer_
  connection_listener* listener_ = nullptr;
  push_handler* push_ = nullptr;
  observer observe_;         // config::log and config::metrics
  std::string described_;    // "<role> connection to host:port", for log lines
  bool been_ready_ = false;  // a later ready is a reconnect
};

}  // namespace deadbolt::detail
