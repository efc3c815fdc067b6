// Who hears what the pipeline does not give to a request: RESP3 pushes, cluster redirections, and
// (for logging) the server's error replies and a refused WAIT.
#pragma once

#include <string_view>

#include "base/server_error.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

class request;

/// Receives replies that belong to no request: RESP3 pushes, and every reply on a subscriber connection.
class push_handler {
 public:
  virtual void on_push_node(const resp::node& n, bool end_of_reply) = 0;

 protected:
  ~push_handler() = default;
};

/// A cluster's answer that the command did not run on this node: a redirection (MOVED, ASK) or
/// "not now" (TRYAGAIN, CLUSTERDOWN).
inline bool is_cluster_redirection(std::string_view error_text) {
  return is_cluster_redirection(server_error_kind_of(error_text));
}

/// Takes requests whose reply was a cluster redirection or "not now" (is_cluster_redirection), or a
/// demoted master's READONLY: the command did not run, and the request is no longer this pipeline's.
class redirect_handler {
 public:
  /// `error_text` lives until the call returns.
  virtual void on_redirect(request& r, std::string_view error_text) = 0;

 protected:
  ~redirect_handler() = default;
};

/// Hears every error reply that answers a request (not a redirection the redirect handler takes, not
/// a NOSCRIPT answered by resending the script): the connection logs the server's words, which the
/// request's error code cannot carry.
class error_reply_listener {
 public:
  /// `error_text` lives until the call returns; the request's on_node() gets the reply next.
  virtual void on_error_reply(const request& r, std::string_view error_text) = 0;
  /// The server refused the WAIT of replica sync (renamed, disabled, denied by an ACL): `sync_off`
  /// when the connection stops asking (automatic), else each hold counts as not synced (required).
  /// Once per refusal that is news (replica_sync::report_refusal()).
  virtual void on_wait_refused(std::string_view error_text, bool sync_off) = 0;

 protected:
  ~error_reply_listener() = default;
};

}  // namespace deadbolt::detail
