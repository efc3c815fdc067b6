// TLS over a connection's socket: one per connection attempt (OpenSSL's state cannot be reused
// after a broken connection). Operations in flight hold it by shared_ptr, so a reconnect that
// replaces it never frees what an aborted operation still touches.
#pragma once

#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "deadbolt/port/asio.hpp"
#include "tls/tls_context.hpp"

#include <asio/ssl/stream.hpp>

namespace deadbolt::detail {

class tls_layer {
 public:
  using socket_type = asio::generic::stream_protocol::socket;

  tls_layer(socket_type& socket, const tls_context& context);

  /// Sets SNI and the name the certificate must carry: tls_config::server_name, else `host`
  /// (an IP address is checked against the certificate's IP entries and sends no SNI).
  std::error_code prepare(const tls_config& settings, const std::string& host);
  /// A failed handshake in plain words: a certificate that failed verification becomes a
  /// tls_verify_category() error that says why; anything else stays as it is.
  std::error_code explain(std::error_code handshake_error);

  asio::ssl::stream<socket_type&>& stream() noexcept { return stream_; }

 private:
  asio::ssl::stream<socket_type&> stream_;
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
