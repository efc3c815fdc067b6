// What a TLS failure means to the session (no Asio, no OpenSSL: the session state machine uses it),
// and deadbolt::tls_verify_category() (deadbolt/error.hpp). The TLS wing (src/tls/) installs OpenSSL's
// words and error category here when it makes a context; a build without TLS never does, and links
// nothing of OpenSSL.
#pragma once

#include <system_error>

namespace deadbolt::detail {

/// What the TLS wing knows of its errors.
struct tls_error_words {
  /// OpenSSL's text for a certificate verification result (X509_V_ERR_*).
  const char* (*verify_text)(long result);
  /// The category of OpenSSL's own errors (an alert from the server, a record that is no TLS).
  const std::error_category* library_errors;
};

/// Called by the TLS wing before its first connection; `words` must live for the program.
void install_tls_error_words(const tls_error_words& words) noexcept;

/// A handshake failure that another attempt will not fix by itself: the server's certificate failed
/// verification, the server refused ours, or it speaks no TLS. Requests waiting for the connection
/// hear it at once (connecting goes on, for a server being reconfigured). Broken or timed-out
/// connections are not permanent. Always false in a build without TLS.
bool is_permanent_tls_failure(std::error_code ec) noexcept;

}  // namespace deadbolt::detail
