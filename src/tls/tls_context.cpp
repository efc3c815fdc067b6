#include "tls/tls_context.hpp"

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

tls_context::tls_context(const tls_config& settings)
    : settings_(settings), context_(asio::ssl::context::tls_client) {}

std::error_code tls_context::make(const tls_config& settings, std::shared_ptr<const tls_context>& out) {
  auto made = std::make_shared<tls_context>(settings);
  asio::ssl::context& ctx = made->context_;
  std::error_code ec;
  // TLS 1.2 and later only (what Redis offers by default).
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1,
                  ec);
  if (!ec) ctx.set_verify_mode(settings.verify_peer ? asio::ssl::verify_peer : asio::ssl::verify_none, ec);
  if (!ec && settings.ca_file.empty() && settings.ca_path.empty()) ctx.set_default_verify_paths(ec);
  if (!ec && !settings.ca_file.empty()) ctx.load_verify_file(settings.ca_file, ec);
  if (!ec && !settings.ca_path.empty()) ctx.add_verify_path(settings.ca_path, ec);
  if (settings.cert_file.empty() != settings.key_file.empty()) return errc::tls_config_invalid;
  if (!ec && !settings.cert_file.empty()) {
    ctx.use_certificate_chain_file(settings.cert_file, ec);
    if (!ec) ctx.use_private_key_file(settings.key_file, asio::ssl::context::pem, ec);
    if (!ec && SSL_CTX_check_private_key(ctx.native_handle()) != 1) return errc::tls_config_invalid;
  }
  if (ec) return errc::tls_config_invalid;
  out = std::move(made);
  return {};
}

}  // namespace deadbolt::detail
