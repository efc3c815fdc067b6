// TLS settings for rediss:// and rediss+cluster:// URLs (docs/tls.md).
#pragma once

#include <string>

namespace deadbolt {

/// How the client speaks TLS. Used only when the URL's scheme is rediss:// or rediss+cluster://.
/// Every path names a PEM file (or, for ca_path, a directory prepared with `openssl rehash`).
/// config::validate() refuses a file it cannot read with errc::tls_config_invalid.
struct tls_config {
  /// The CAs that may sign the server's certificate. Both empty: the system's trust store.
  std::string ca_file;
  std::string ca_path;
  /// Mutual TLS: the client's certificate (chain) and its private key; both or neither.
  std::string cert_file;
  std::string key_file;
  /// The name sent as SNI and checked against the server's certificate. Empty: the URL's host (an IP
  /// address is checked against the certificate's IP entries and sends no SNI).
  std::string server_name;
  /// Verify the server's certificate and its name. Turning it off accepts any server, including an
  /// impostor: for tests only.
  bool verify_peer = true;
};

}  // namespace deadbolt
