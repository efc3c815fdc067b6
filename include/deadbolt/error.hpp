// deadbolt's error codes. Every operation reports a std::error_code: one of these, a RESP decoding
// error (deadbolt::resp::error), a system/Asio error from the transport, or asio::error::operation_aborted
// when an operation was cancelled.
#pragma once

#include <system_error>

namespace deadbolt {

enum class errc {
  ok = 0,
  invalid_config = 1,   ///< a config value is out of range
  invalid_url,          ///< the server URL cannot be parsed
  not_connected,        ///< no connection to the server could be made before the request's deadline
  timed_out,            ///< the server did not answer within command_timeout
  outcome_unknown,      ///< the connection broke after the request was sent: it may or may not have run
  not_owner,            ///< unlock or renew by someone who does not hold the lock
  lease_lost,           ///< the lock is no longer ours (expired, deleted or taken over)
  waiter_table_full,    ///< config::max_waiters callers are already waiting
  channel_table_full,   ///< config::max_channels channels are already subscribed
  held_table_full,      ///< config::max_held_locks locks are already renewed by the watchdog
  auth_failed,          ///< the server rejected the user name or password
  permission_denied,    ///< the ACL user may not run a command the lock needs (NOPERM)
  wrong_type,           ///< the lock's key holds a value of another type (WRONGTYPE)
  server_error,         ///< any other error reply from the server
  protocol_error,       ///< a reply of an unexpected shape
  shutting_down,        ///< the client is being destroyed
  quorum_not_reached,   ///< red lock: fewer than n/2 + 1 members held, some of them failing with errors
  invalid_argument,     ///< an argument out of range (e.g. negative permits or lease)
  no_such_permit,       ///< release of a permit that is not held: unknown id, already released, or expired
  no_resolver,          ///< the URL names a host, but this build resolves none (DEADBOLT_SYSTEM_RESOLVER=OFF)
  server_busy,          ///< the server is loading its dataset or running a script (LOADING, BUSY); waits ride it out
  would_deadlock,       ///< a blocking call made on the client's own event-loop thread (from a handler)
  node_table_full,      ///< Redis Cluster: config::max_cluster_nodes nodes are already known
  cluster_down,         ///< Redis Cluster: no node served the key's slot (CLUSTERDOWN, TRYAGAIN, no layout) in time
  redirect_loop,        ///< Redis Cluster: the nodes kept redirecting the command to each other, past command_timeout
  not_built,            ///< the URL needs a part this build leaves out (DEADBOLT_CLUSTER/SENTINEL/TLS=OFF)
  cross_slot,           ///< Redis Cluster: the object's keys fall in different slots (braces that are no hash tag)
  tls_config_invalid,   ///< config::tls: a CA, certificate or key file is missing, unreadable or not PEM,
                        ///< the key does not match the certificate, or only one of the two is given
  tls_handshake_timed_out,  ///< the TLS handshake did not finish within connect_timeout (a plaintext port?)
  closed_during_login,  ///< the server closed the connection before answering the login (a TLS port? use rediss://)
  not_master,           ///< the server is a replica (READONLY), or the one the sentinels named is not a master (ROLE)
  unknown_master,       ///< Sentinel: no sentinel that answered knows the URL's master name
  replicas_not_synced,  ///< replica sync: no replica acknowledged the hold, on every try (config::replica_sync)
  needs_cluster_url,    ///< the server is a Redis Cluster node (MOVED, ASK) reached by a redis:// URL
};

const std::error_category& deadbolt_category() noexcept;

/// The category of a server certificate that failed verification during the TLS handshake (docs/tls.md).
/// The value is OpenSSL's X509_V_ERR_* code; the message says what was wrong, e.g. "certificate verify
/// failed: certificate has expired", "...: hostname mismatch", "...: unable to get local issuer certificate".
/// Other handshake failures (the server refused our certificate, it speaks no TLS) are in Asio's
/// ssl category (asio::error::get_ssl_category()) with OpenSSL's message.
const std::error_category& tls_verify_category() noexcept;

inline std::error_code make_error_code(errc e) noexcept {
  return {static_cast<int>(e), deadbolt_category()};
}

}  // namespace deadbolt

template <>
struct std::is_error_code_enum<deadbolt::errc> : std::true_type {};
