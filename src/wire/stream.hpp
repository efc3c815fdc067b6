// The byte stream under a connection: TCP or a unix domain socket (one generic socket serves both),
// and for rediss:// URLs a secure layer (TLS, plugged in through src/wire/secure_layer.hpp) over the
// TCP socket. The plain path costs one branch on a pointer per operation; the session state machine
// asks for the handshake only when its settings say TLS.
#pragma once

#include <memory>
#include <system_error>
#include <utility>

#include "base/server_address.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "wire/secure_layer.hpp"

namespace deadbolt::detail {

class stream {
 public:
  /// `secure`: encrypt with it (null: plain).
  explicit stream(const asio::any_io_executor& ex, std::shared_ptr<const secure_transport> secure = nullptr)
      : socket_(ex), transport_(std::move(secure)) {}

  /// Closes any earlier connection and starts connecting to `where` (a numeric address or a unix
  /// socket). An error returned means the attempt could not even start, and `done` is not called;
  /// otherwise `done(ec)` runs once the connection is made or has failed.
  template <typename Handler>
  std::error_code async_connect(const server_address& where, Handler&& done) {
    asio::generic::stream_protocol::endpoint target;
    if (auto ec = open(where, target)) return ec;
    socket_.async_connect(target, [this, done = std::forward<Handler>(done)](std::error_code ec) mutable {
      if (!ec) {
        std::error_code ignored;
        if (tcp_) socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
        socket_.non_blocking(true, ignored);  // write_now() never blocks
      }
      done(ec);
    });
    return {};
  }

  /// The step between connecting and logging in: the secure layer's handshake, checking the
  /// certificate against `named` (the host the address source gave, before resolving). Plain streams
  /// have none: it succeeds at once (posted, never inside this call).
  void async_handshake(const server_address& named, io_done done);
  void async_read_some(asio::mutable_buffer into, io_done done) {
    if (layer_) return layer_->async_read_some(into, std::move(done));
    socket_.async_read_some(into, std::move(done));
  }

  /// Plain streams: writes as much of `bytes` as the socket takes now, without waiting, and returns how
  /// much that was. 0 on secure streams, and when the socket is full or failed: the async_write() that
  /// follows for the rest reports any error, in its handler.
  std::size_t write_now(asio::const_buffer bytes) noexcept {
    if (layer_) return 0;
    std::error_code ec;
    const std::size_t n = socket_.write_some(bytes, ec);
    return ec ? 0 : n;
  }

  /// Writes all of `bytes`.
  void async_write(asio::const_buffer bytes, io_done done) {
    if (layer_) return layer_->async_write(bytes, std::move(done));
    asio::async_write(socket_, bytes, std::move(done));
  }

  /// Ends the connection; operations in flight complete with operation_aborted. (TLS: no close_notify;
  /// the connection is being dropped, and the server does not need one.)
  void close() noexcept {
    std::error_code ignored;
    socket_.close(ignored);
  }

 private:
  std::error_code open(const server_address& where, asio::generic::stream_protocol::endpoint& target);

  asio::generic::stream_protocol::socket socket_;
  bool tcp_ = false;
  std::shared_ptr<const secure_transport> transport_;
  std::shared_ptr<secure_layer> layer_;  // this attempt's; null on a plain stream
};

}  // namespace deadbolt::detail
