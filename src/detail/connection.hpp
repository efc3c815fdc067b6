// One connection to the server, kept alive: connects, logs in, carries the pipeline's bytes, fails
// requests whose deadline passes and reconnects with jittered backoff when the link drops.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio.hpp"
#include "deadbolt/port/resolver.hpp"
#include "deadbolt/resp/read_buffer.hpp"
#include "detail/handler_memory.hpp"
#include "detail/pipeline.hpp"

namespace deadbolt::detail {

/// Told when the connection becomes usable and when it drops.
class connection_listener {
 public:
  virtual void on_connected() = 0;
  virtual void on_disconnected(std::error_code why) = 0;

 protected:
  ~connection_listener() = default;
};

class connection : public std::enable_shared_from_this<connection> {
 public:
  enum class role { command, subscriber };

  connection(asio::any_io_executor ex, endpoint ep, const config& cfg, role r);
  ~connection();

  /// Starts connecting; keeps reconnecting until stop().
  void start();
  /// Closes for good: every queued request fails with errc::shutting_down.
  void stop();

  /// Queues a request; it is written as soon as the connection is ready. Must run on the executor.
  void submit(request& r);

  bool ready() const noexcept { return state_ == state::ready; }
  /// Nothing queued and nothing awaiting a reply.
  bool idle() const noexcept { return pipeline_.idle(); }
  /// Why the last connection attempt failed or the last connection dropped (empty when none did).
  std::error_code last_error() const noexcept { return last_error_; }
  const endpoint& where() const noexcept { return endpoint_; }
  /// Drops the current connection as if the network failed (tests, and stuck-connection recovery).
  void drop(std::error_code why);

  void set_listener(connection_listener* l) noexcept { listener_ = l; }
  void set_push_handler(push_handler* h) noexcept { push_ = h; }
  /// The RESP version the server agreed to (3 after HELLO 3, else 2).
  int protocol() const noexcept { return protocol_; }

 private:
  enum class state { idle, connecting, handshaking, ready, waiting_to_reconnect, stopped };
  class handshake_step;

  void connect();
  void connect_next(std::size_t index);
  void on_transport_up();
  void start_handshake();
  void handshake_reply(handshake_step& step, std::error_code ec);
  void handshake_done();
  void handshake_failed(std::error_code ec);
  void read();
  void flush();
  void arm_deadline_timer();
  void on_deadline();
  void schedule_reconnect();
  std::int64_t deadline_from_now() const;

  asio::any_io_executor executor_;
  endpoint endpoint_;
  config config_;
  role role_;
  state state_ = state::idle;
  asio::generic::stream_protocol::socket socket_;
  std::unique_ptr<port::host_resolver> resolver_;  // made on the first host name (none for addresses)
  std::vector<asio::generic::stream_protocol::endpoint> candidates_;
  asio::steady_timer connect_timer_;
  asio::steady_timer deadline_timer_;
  asio::steady_timer reconnect_timer_;
  std::int64_t deadline_armed_ns_ = 0;
  resp::read_buffer input_;
  handler_memory read_memory_;   // the one read in flight
  handler_memory write_memory_;  // the one write in flight
  pipeline pipeline_;
  std::unique_ptr<handshake_step[]> steps_;
  std::size_t steps_pending_ = 0;
  bool routing_input_ = false;  // inside pipeline_.on_input(): the read handler flushes afterwards
  bool legacy_login_ = false;   // server has no HELLO: AUTH + CLIENT SETNAME instead
  int protocol_ = 2;
  unsigned reconnect_attempt_ = 0;
  std::uint64_t jitter_state_;
  std::error_code last_error_;
  std::uint64_t generation_ = 0;  // bumps on every drop: stale completions are ignored
  connection_listener* listener_ = nullptr;
  push_handler* push_ = nullptr;
};

}  // namespace deadbolt::detail
