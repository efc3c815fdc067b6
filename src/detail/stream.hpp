// The byte stream under a connection: TCP or a unix domain socket (one generic socket serves both).
// TLS (next) is another stream with a real handshake step; the session state machine already has the
// step, and asks for it only when its settings say the stream needs one.
#pragma once

#include <system_error>
#include <utility>

#include "deadbolt/port/asio.hpp"
#include "detail/server_address.hpp"

namespace deadbolt::detail {

class stream {
 public:
  explicit stream(const asio::any_io_executor& ex) : socket_(ex) {}

  /// Closes any earlier connection and starts connecting to `where` (a numeric address or a unix
  /// socket). An error returned means the attempt could not even start, and `done` is not called;
  /// otherwise `done(ec)` runs once the connection is made or has failed.
  template <typename Handler>
  std::error_code async_connect(const server_address& where, Handler&& done) {
    asio::generic::stream_protocol::endpoint target;
    if (auto ec = open(where, target)) return ec;
    socket_.async_connect(target, [this, done = std::forward<Handler>(done)](std::error_code ec) mutable {
      if (!ec && tcp_) {
        std::error_code ignored;
        socket_.set_option(asio::ip::tcp::no_delay(true), ignored);
      }
      done(ec);
    });
    return {};
  }

  /// The step between connecting and logging in. TCP and unix sockets have none: it succeeds at once
  /// (posted, never inside this call).
  template <typename Handler>
  void async_handshake(Handler&& done) {
    asio::post(socket_.get_executor(), [done = std::forward<Handler>(done)]() mutable { done(std::error_code()); });
  }

  template <typename Handler>
  void async_read_some(asio::mutable_buffer into, Handler&& done) {
    socket_.async_read_some(into, std::forward<Handler>(done));
  }

  /// Writes all of `bytes`.
  template <typename Handler>
  void async_write(asio::const_buffer bytes, Handler&& done) {
    asio::async_write(socket_, bytes, std::forward<Handler>(done));
  }

  /// Ends the connection; operations in flight complete with operation_aborted.
  void close() noexcept {
    std::error_code ignored;
    socket_.close(ignored);
  }

 private:
  std::error_code open(const server_address& where, asio::generic::stream_protocol::endpoint& target);

  asio::generic::stream_protocol::socket socket_;
  bool tcp_ = false;
};

}  // namespace deadbolt::detail
