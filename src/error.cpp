#include "deadbolt/error.hpp"

#include <string>

namespace deadbolt {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "deadbolt"; }

  std::string message(int code) const override {
    switch (static_cast<errc>(code)) {
      case errc::ok: return "success";
      case errc::invalid_config: return "invalid configuration";
      case errc::invalid_url: return "invalid server URL";
      case errc::not_connected: return "not connected to the server";
      case errc::timed_out: return "the server did not answer in time";
      case errc::outcome_unknown: return "connection lost after the request was sent; its outcome is unknown";
      case errc::not_owner: return "the lock is not held by this owner";
      case errc::lease_lost: return "the lock's lease was lost";
      case errc::waiter_table_full: return "the waiter table is full (config::max_waiters)";
      case errc::channel_table_full: return "the channel table is full (config::max_channels)";
      case errc::held_table_full: return "the held-lock table is full (config::max_held_locks)";
      case errc::auth_failed: return "authentication failed";
      case errc::permission_denied: return "permission denied by the server's ACL";
      case errc::wrong_type: return "the key holds a value of the wrong type";
      case errc::server_error: return "the server returned an error";
      case errc::protocol_error: return "unexpected reply from the server";
      case errc::shutting_down: return "the client is shutting down";
      case errc::quorum_not_reached: return "a majority of the red lock's servers could not be locked";
      case errc::invalid_argument: return "invalid argument";
      case errc::no_such_permit: return "no such permit: unknown, already released, or expired";
      case errc::no_resolver: return "this build cannot resolve host names: use a numeric address or a unix socket";
      case errc::server_busy: return "the server is loading its dataset or busy running a script";
      case errc::would_deadlock:
        return "blocking call made on the client's own event-loop thread (from a handler): it would wait for itself";
      case errc::node_table_full: return "Redis Cluster: config::max_cluster_nodes nodes are already known";
      case errc::cluster_down:
        return "Redis Cluster: no node served the key's slot in time (CLUSTERDOWN, TRYAGAIN or no layout)";
      case errc::redirect_loop: return "Redis Cluster: the nodes kept redirecting the command to each other";
      case errc::cross_slot:
        return "Redis Cluster: the object's keys fall in different hash slots: its name has braces that do not form "
               "a hash tag (a '}' without a '{' before it, or '{}')";
      case errc::not_built:
        return "this build leaves out what the URL asks for (built with DEADBOLT_CLUSTER=OFF, DEADBOLT_SENTINEL=OFF or DEADBOLT_TLS=OFF)";
      case errc::tls_config_invalid:
        return "invalid TLS configuration: a CA, certificate or key file is missing, unreadable or not PEM, or the "
               "key does not match the certificate";
      case errc::tls_handshake_timed_out:
        return "the TLS handshake did not finish within connect_timeout: does the server speak TLS on that port?";
      case errc::closed_during_login:
        return "the server closed the connection before answering the login: a TLS port needs a rediss:// URL";
      case errc::not_master:
        return "this server is a replica, not the master (READONLY, or ROLE said so): the URL names a replica, "
               "or a failover is under way";
      case errc::unknown_master:
        return "Sentinel: no sentinel knows the master name of the URL";
      case errc::replicas_not_synced:
        return "no replica acknowledged the write in time (config::replica_sync), on every try";
      case errc::needs_cluster_url:
        return "this is a cluster node (it answered MOVED or ASK): use a redis+cluster:// URL";
    }
    return "unknown deadbolt error";
  }
};

}  // namespace

const std::error_category& deadbolt_category() noexcept {
  static const category instance;
  return instance;
}

}  // namespace deadbolt
