// The byte stream under a connection: TCP or a unix domain socket (one generic socket serves both),
// and for rediss:// URLs TLS over the TCP socket. The plain path costs one branch on a pointer per
// operation; the session state machine asks for the handshake only when its settings say TLS.
#pragma once

#include <memory>
#include <system_error>
#include <utility>

#include "base/server_address.hpp"
#include "deadbolt/port/asio.hpp"

#ifndef DEADBOLT_HAS_TLS
#error "DEADBOLT_HAS_TLS must be defined (src/CMakeLists.txt): it changes this class"
#endif
#if DEADBOLT_HAS_TLS
#include "tls/tls_layer.hpp"
#endif

namespace deadbolt::detail {

class tls_context;

class stream {
 public:
  /// `tls`: speak TLS with this context (null: plain).
  explicit stream(const asio::any_io_executor& ex, std::shared_ptr<const tls_context> tls = nullptr)
      : socket_(ex), tls_context_(std::move(tls)) {}

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

  /// The step between connecting and logging in: the TLS handshake, checking the certificate against
  /// `named` (the host the address source gave, before resolving). Plain streams have none: it
  /// succeeds at once (posted, never inside this call).
  template <typename Handler>
  void async_handshake(const server_address& named, Handler&& done) {
#if DEADBOLT_HAS_TLS
    if (tls_) {
      if (std::error_code ec = start_tls(named)) {
        asio::post(socket_.get_executor(), [done = std::forward<Handler>(done), ec]() mutable { done(ec); });
        return;
      }
      tls_->stream().async_handshake(asio::ssl::stream_base::client,
                                     [layer = tls_, done = std::forward<Handler>(done)](std::error_code ec) mutable {
                                       done(layer->explain(ec));
                                     });
      return;
    }
#else
    (void)named;
#endif
    asio::post(socket_.get_executor(), [done = std::forward<Handler>(done)]() mutable { done(std::error_code()); });
  }

  template <typename Handler>
  void async_read_some(asio::mutable_buffer into, Handler&& done) {
#if DEADBOLT_HAS_TLS
    if (tls_) {
      tls_->stream().async_read_some(into, tls_op_handler<std::decay_t<Handler>>(tls_, std::forward<Handler>(done)));
      return;
    }
#endif
    socket_.async_read_some(into, std::forward<Handler>(done));
  }

  /// Plain streams: writes as much of `bytes` as the socket takes now, without waiting, and returns how
  /// much that was. 0 on TLS streams, and when the socket is full or failed: the async_write() that
  /// follows for the rest reports any error, in its handler.
  std::size_t write_now(asio::const_buffer bytes) noexcept {
#if DEADBOLT_HAS_TLS
    if (tls_) return 0;
#endif
    std::error_code ec;
    const std::size_t n = socket_.write_some(bytes, ec);
    return ec ? 0 : n;
  }

  /// Writes all of `bytes`.
  template <typename Handler>
  void async_write(asio::const_buffer bytes, Handler&& done) {
#if DEADBOLT_HAS_TLS
    if (tls_) {
      asio::async_write(tls_->stream(), bytes, tls_op_handler<std::decay_t<Handler>>(tls_, std::forward<Handler>(done)));
      return;
    }
#endif
    asio::async_write(socket_, bytes, std::forward<Handler>(done));
  }

  /// Ends the connection; operations in flight complete with operation_aborted. (TLS: no close_notify;
  /// the connection is being dropped, and the server does not need one.)
  void close() noexcept {
    std::error_code ignored;
    socket_.close(ignored);
  }

 private:
  std::error_code open(const server_address& where, asio::generic::stream_protocol::endpoint& target);
#if DEADBOLT_HAS_TLS
  std::error_code start_tls(const server_address& named);
#endif

  asio::generic::stream_protocol::socket socket_;
  bool tcp_ = false;
  std::shared_ptr<const tls_context> tls_context_;
#if DEADBOLT_HAS_TLS
  std::shared_ptr<tls_layer> tls_;  // this attempt's TLS state; null on a plain stream
#endif
};

}  // namespace deadbolt::detail
