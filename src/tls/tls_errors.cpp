#include "tls/tls_errors.hpp"

#include <string>

#include "deadbolt/error.hpp"

#if DEADBOLT_HAS_TLS
#include "deadbolt/port/asio.hpp"
#include <asio/ssl/error.hpp>
#include <openssl/x509.h>
#endif

namespace deadbolt {
namespace {

class tls_verify_category_impl final : public std::error_category {
 public:
  const char* name() const noexcept override { return "deadbolt.tls_verify"; }
  std::string message(int code) const override {
#if DEADBOLT_HAS_TLS
    return std::string("certificate verify failed: ") + X509_verify_cert_error_string(code);
#else
    return "certificate verify failed: OpenSSL verification error " + std::to_string(code);
#endif
  }
};

}  // namespace

const std::error_category& tls_verify_category() noexcept {
  static const tls_verify_category_impl instance;
  return instance;
}

namespace detail {

bool is_permanent_tls_failure(std::error_code ec) noexcept {
  if (ec.category() == tls_verify_category()) return true;
#if DEADBOLT_HAS_TLS
  // OpenSSL's own errors: an alert from the server, a record that is no TLS. Not Asio's stream
  // category (stream_truncated: the connection just ended) nor system errors.
  if (ec.category() == asio::error::get_ssl_category()) return true;
#endif
  return false;
}

}  // namespace detail
}  // namespace deadbolt
