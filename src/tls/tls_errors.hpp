// What a TLS failure means to the session (no Asio, no OpenSSL: the session state machine uses it).
#pragma once

#include <system_error>

namespace deadbolt::detail {

/// A handshake failure that another attempt will not fix by itself: the server's certificate failed
/// verification, the server refused ours, or it speaks no TLS. Requests waiting for the connection
/// hear it at once (connecting goes on, for a server being reconfigured). Broken or timed-out
/// connections are not permanent. Always false in a build without TLS.
bool is_permanent_tls_failure(std::error_code ec) noexcept;

}  // namespace deadbolt::detail
