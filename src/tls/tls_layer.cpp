#include "tls/tls_layer.hpp"

#include "deadbolt/error.hpp"

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace deadbolt::detail {

tls_layer::tls_layer(socket_type& socket, const tls_context& context) : stream_(socket, context.native()) {
  // Asio turns SSL_MODE_RELEASE_BUFFERS on: OpenSSL then frees its record buffers whenever they are
  // empty and allocates them again for the next record, a malloc and a free for every read and write.
  // A connection keeps them (about 34 KB) instead, as a plain one keeps its own buffers.
  SSL_clear_mode(stream_.native_handle(), SSL_MODE_RELEASE_BUFFERS);
}

std::error_code tls_layer::prepare(const tls_config& settings, const std::string& host) {
  const std::string& name = settings.server_name.empty() ? host : settings.server_name;
  SSL* ssl = stream_.native_handle();
  std::error_code not_ip;
  asio::ip::make_address(name, not_ip);
  if (not_ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) return errc::tls_config_invalid;
  verifying_ = settings.verify_peer;
  if (!verifying_) return {};
  // OpenSSL's own name check (rather than a verify callback): a mismatch then has its own verify
  // result, X509_V_ERR_HOSTNAME_MISMATCH or X509_V_ERR_IP_ADDRESS_MISMATCH, that explain() reports.
  X509_VERIFY_PARAM* param = SSL_get0_param(ssl);
  X509_VERIFY_PARAM_set_hostflags(param, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
  const int ok = not_ip ? X509_VERIFY_PARAM_set1_host(param, name.c_str(), name.size())
                        : X509_VERIFY_PARAM_set1_ip_asc(param, name.c_str());
  return ok == 1 ? std::error_code() : make_error_code(errc::tls_config_invalid);
}

std::error_code tls_layer::explain(std::error_code handshake_error) {
  if (!handshake_error || !verifying_) return handshake_error;
  const long verdict = SSL_get_verify_result(stream_.native_handle());
  if (verdict != X509_V_OK) return {static_cast<int>(verdict), tls_verify_category()};
  return handshake_error;
}

}  // namespace deadbolt::detail
