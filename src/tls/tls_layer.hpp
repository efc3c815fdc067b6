// TLS over a connection's socket: one per connection attempt (OpenSSL's state cannot be reused
// after a broken connection). Operations in flight hold it by shared_ptr, so a reconnect that
// replaces it never frees what an aborted operation still touches.
#pragma once

#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "deadbolt/port/asio_core.hpp"
#include "tls/tls_context.hpp"
#include "wire/secure_layer.hpp"

#include <asio/ssl/stream.hpp>

namespace deadbolt::detail {

class tls_layer final : public secure_layer, public std::enable_shared_from_this<tls_layer> {
 public:
  using socket_type = secure_transport::socket_type;

  tls_layer(socket_type& socket, const tls_context& context);

  /// Sets SNI and the name the certificate must carry: tls_config::server_name, else `host`
  /// (an IP address is checked against the certificate's IP entries and sends no SNI).
  std::error_code prepare(const std::string& host) override;
  /// The handshake; a failure comes explained (explain()).
  void async_handshake(io_done done) override;
  void async_read_some(asio::mutable_buffer into, io_done done) override;
  void async_write(asio::const_buffer bytes, io_done done) override;

  /// A failed handshake in plain words: a certificate that failed verification becomes a
  /// tls_verify_category() error that says why; anything else stays as it is.
  std::error_code explain(std::error_code handshake_error);

  asio::ssl::stream<socket_type&>& stream() noexcept { return stream_; }

 private:
  asio::ssl::stream<socket_type&> stream_;
  std::string server_name_;  // tls_config::server_name (copied: the layer may outlive its client)
  bool verify_peer_ = false;
  bool verifying_ = false;
};

/// Keeps a tls_layer alive until an operation's handler runs; the handler's allocator still applies.
template <typename Handler>
class tls_op_handler {
 public:
  using allocator_type = asio::associated_allocator_t<Handler>;

  tls_op_handler(std::shared_ptr<tls_layer> layer, Handler handler)
      : layer_(std::move(layer)), handler_(std::move(handler)) {}

  allocator_type get_allocator() const noexcept { return asio::get_associated_allocator(handler_); }

  template <typename... Args>
  void operator()(Args&&... args) {
    handler_(std::forward<Args>(args)...);
  }

 private:
  std::shared_ptr<tls_layer> layer_;
  Handler handler_;
};

}  // namespace deadbolt::detail
