#include "tls/tls_layer.hpp"

#include "deadbolt/error.hpp"

#include <asio/write.hpp>

#include <openssl/ssl.h>
#include <openssl/x509v3.h>

namespace deadbolt::detail {

tls_layer::tls_layer(socket_type& socket, const tls_context& context)
    : stream_(socket, context.native()),
      server_name_(context.settings().server_name),
      verify_peer_(context.settings().verify_peer) {
  // Asio turns SSL_MODE_RELEASE_BUFFERS on: OpenSSL then frees its record buffers whenever they are
  // empty and allocates them again for the next record, a malloc and a free for every read and write.
  // A connection keeps them (about 34 KB) instead, as a plain one keeps its own buffers.
  SSL_clear_mode(stream_.native_handle(), SSL_MODE_RELEASE_BUFFERS);
}

std::error_code tls_layer::prepare(const std::string& host) {
  const std::string& name = server_name_.empty() ? host : server_name_;
  SSL* ssl = stream_.native_handle();
  std::error_code not_ip;
  asio::ip::make_address(name, not_ip);
  if (not_ip && SSL_set_tlsext_host_name(ssl, name.c_str()) != 1) return errc::tls_config_invalid;
  verifying_ = verify_peer_;
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

namespace {

// The handshake's completion, explained by its layer (kept alive until it runs).
class explained_handshake {
 public:
  using allocator_type = io_done::allocator_type;
  explained_handshake(std::shared_ptr<tls_layer> layer, io_done done) : layer_(std::move(layer)), done_(std::move(done)) {}
  allocator_type get_allocator() const noexcept { return done_.get_allocator(); }
  void operator()(std::error_code ec) { done_(layer_->explain(ec)); }

 private:
  std::shared_ptr<tls_layer> layer_;
  io_done done_;
};

}  // namespace

void tls_layer::async_handshake(io_done done) {
  stream_.async_handshake(asio::ssl::stream_base::client, explained_handshake(shared_from_this(), std::move(done)));
}

void tls_layer::async_read_some(asio::mutable_buffer into, io_done done) {
  stream_.async_read_some(into, tls_op_handler<io_done>(shared_from_this(), std::move(done)));
}

void tls_layer::async_write(asio::const_buffer bytes, io_done done) {
  asio::async_write(stream_, bytes, tls_op_handler<io_done>(shared_from_this(), std::move(done)));
}

std::shared_ptr<secure_layer> tls_context::layer_over(socket_type& socket) const {
  return std::make_shared<tls_layer>(socket, *this);
}

}  // namespace deadbolt::detail
