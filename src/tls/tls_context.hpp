// A client's TLS context (OpenSSL's SSL_CTX through Asio), made once from config::tls and shared by
// all of the client's connections: their secure_transport (src/wire/secure_layer.hpp), which gives
// each connection attempt a fresh tls_layer.
#pragma once

#include <memory>
#include <string>
#include <system_error>

#include "deadbolt/port/asio_core.hpp"
#include "deadbolt/tls_config.hpp"
#include "wire/secure_layer.hpp"

#include <asio/ssl/context.hpp>

namespace deadbolt::detail {

class tls_context final : public secure_transport {
 public:
  /// Loads the CAs (or the system store), the client certificate and key; errc::tls_config_invalid
  /// when one of them cannot be used, and then (when `why` is given) which file and what is wrong with
  /// it: "cert_file '/etc/c.pem': cannot read it: Permission denied", "... is not a PEM certificate
  /// (OpenSSL: ...)", "key_file '...' does not match cert_file '...'".
  static std::error_code make(const tls_config& settings, std::shared_ptr<const tls_context>& out,
                              std::string* why = nullptr);

  const tls_config& settings() const noexcept { return settings_; }
  /// Asio's streams take the context by non-const reference; OpenSSL makes connections from a shared
  /// SSL_CTX safely once it is set up, which make() finishes before anyone sees it.
  asio::ssl::context& native() const noexcept { return context_; }

  explicit tls_context(const tls_config& settings);

  std::shared_ptr<secure_layer> layer_over(socket_type& socket) const override;

 private:
  tls_config settings_;
  mutable asio::ssl::context context_;
};

}  // namespace deadbolt::detail
