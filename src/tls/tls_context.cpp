#include "tls/tls_context.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "deadbolt/error.hpp"
#include "wire/tls_failures.hpp"

#include <asio/ssl/error.hpp>
#include <openssl/x509.h>

namespace deadbolt::detail {

tls_context::tls_context(const tls_config& settings)
    : settings_(settings), context_(asio::ssl::context::tls_client) {}

namespace {

const tls_error_words openssl_words{&X509_verify_cert_error_string, &asio::error::get_ssl_category()};

// A file the settings name that cannot be opened: the system's reason, which says more than
// OpenSSL's "system lib".
bool unreadable(const std::string& path, bool directory, std::string& reason) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) {
    reason = std::strerror(errno);
    return true;
  }
  ::close(fd);
  return false;
}

}  // namespace

std::error_code tls_context::make(const tls_config& settings, std::shared_ptr<const tls_context>& out, std::string* why) {
  // The first problem, in words when asked: the setting, its file, and what is wrong with it.
  auto refuse = [why](const char* field, const std::string& path, const std::string& problem) -> std::error_code {
    if (why) *why = std::string(field) + (path.empty() ? "" : " '" + path + "'") + ": " + problem;
    return errc::tls_config_invalid;
  };
  auto openssl = [](const std::error_code& ec) { return " (OpenSSL: " + ec.message() + ")"; };
  if (settings.cert_file.empty() != settings.key_file.empty()) {
    if (why) *why = settings.cert_file.empty() ? "key_file is given without cert_file: give both or neither"
                                               : "cert_file is given without key_file: give both or neither";
    return errc::tls_config_invalid;
  }
  install_tls_error_words(openssl_words);
  auto made = std::make_shared<tls_context>(settings);
  asio::ssl::context& ctx = made->context_;
  std::error_code ec;
  std::string reason;
  // TLS 1.2 and later only (what Redis offers by default).
  ctx.set_options(asio::ssl::context::default_workarounds | asio::ssl::context::no_sslv2 |
                      asio::ssl::context::no_sslv3 | asio::ssl::context::no_tlsv1 | asio::ssl::context::no_tlsv1_1,
                  ec);
  if (!ec) ctx.set_verify_mode(settings.verify_peer ? asio::ssl::verify_peer : asio::ssl::verify_none, ec);
  if (ec) return refuse("options", "", "OpenSSL refused them" + openssl(ec));
  if (settings.ca_file.empty() && settings.ca_path.empty()) {
    ctx.set_default_verify_paths(ec);
    if (ec) return refuse("ca_file", "", "none given, and the system's trust store cannot be used" + openssl(ec));
  }
  if (!settings.ca_file.empty()) {
    if (unreadable(settings.ca_file, false, reason)) return refuse("ca_file", settings.ca_file, "cannot read it: " + reason);
    ctx.load_verify_file(settings.ca_file, ec);
    if (ec) return refuse("ca_file", settings.ca_file, "holds no PEM certificate" + openssl(ec));
  }
  if (!settings.ca_path.empty()) {
    if (unreadable(settings.ca_path, true, reason)) return refuse("ca_path", settings.ca_path, "cannot open it as a directory: " + reason);
    ctx.add_verify_path(settings.ca_path, ec);
    if (ec) return refuse("ca_path", settings.ca_path, "cannot be used" + openssl(ec));
  }
  if (!settings.cert_file.empty()) {
    if (unreadable(settings.cert_file, false, reason)) return refuse("cert_file", settings.cert_file, "cannot read it: " + reason);
    if (unreadable(settings.key_file, false, reason)) return refuse("key_file", settings.key_file, "cannot read it: " + reason);
    // The key first: loaded after the certificate, a key of another pair fails as if it were no key.
    ctx.use_private_key_file(settings.key_file, asio::ssl::context::pem, ec);
    if (ec) return refuse("key_file", settings.key_file, "is not a PEM private key (or it is encrypted)" + openssl(ec));
    ctx.use_certificate_chain_file(settings.cert_file, ec);
    if (ec) return refuse("cert_file", settings.cert_file, "is not a PEM certificate" + openssl(ec));
    if (SSL_CTX_check_private_key(ctx.native_handle()) != 1) {
      return refuse("key_file", settings.key_file, "does not match cert_file '" + settings.cert_file + "'");
    }
  }
  out = std::move(made);
  return {};
}

}  // namespace deadbolt::detail
