// What a server's error reply means: the one place that reads an error reply's text. A request's
// answer, a login step, a refused subscription, a redirection and a probe all ask here, so an error
// means the same everywhere, wherever the server raised it. Sans-I/O; tested without a server
// (tests/core/server_error_test.cpp).
//
// An error raised inside a script keeps its meaning:
//   Redis 7+      the failing command's own code, its words, then " script: <sha>, on @user_script:<line>."
//                 ("WRONGTYPE Operation against a key ... script: ..."), except an ACL refusal, which
//                 the server words as an ERR: "ERR The user executing the script can't ..." (7.0),
//                 "ERR ACL failure in script: ..." (7.2+)
//   before 7      "ERR Error running script (call to f_<sha>): @user_script:<line>: <the error>", the
//                 error itself with its code, or an ACL refusal worded as above
#pragma once

#include <string_view>
#include <system_error>

namespace deadbolt::detail {

enum class server_error_kind {
  other,            ///< ERR and every code not listed here: errc::server_error
  noscript,         ///< NOSCRIPT: EVALSHA of a script the server does not have (the pipeline resends it)
  unknown_command,  ///< ERR unknown command / subcommand (HELLO before Redis 6, CLUSTER SHARDS before 7)
  no_protocol,      ///< NOPROTO: HELLO asked for a protocol the server does not speak
  moved,            ///< MOVED: a cluster node; the key's slot is served by another node
  ask,              ///< ASK: a cluster node; the key's slot is migrating to another node
  try_again,        ///< TRYAGAIN: a cluster node, mid-migration: not now
  cluster_down,     ///< CLUSTERDOWN: the cluster serves no key now
  read_only,        ///< READONLY or MASTERDOWN: a replica (or a master demoted since)
  loading,          ///< LOADING: the server is loading its dataset
  busy,             ///< BUSY: another client's script runs (not BUSYKEY, whose command ran)
  no_permission,    ///< NOPERM, or an ACL refusal inside a script
  auth,             ///< WRONGPASS, NOAUTH, or AUTH refused as an ERR ("invalid password", ...)
  wrong_type,       ///< WRONGTYPE: the key holds another type
  cross_slot,       ///< CROSSSLOT: a cluster node; one command's keys fall in different slots
};

/// The kind of the error reply `text` (without the leading '-': "NOPERM this user has ...").
server_error_kind server_error_kind_of(std::string_view text);

/// The error code `text` is reported as: permission_denied, not_master, needs_cluster_url,
/// server_busy, ... (docs/errors.md); server_error for any other.
std::error_code server_error_code(std::string_view text);
std::error_code server_error_code(server_error_kind kind);

/// A cluster's "the command did not run on this node": a redirection (MOVED, ASK) or "not now"
/// (TRYAGAIN, CLUSTERDOWN).
inline bool is_cluster_redirection(server_error_kind k) {
  return k == server_error_kind::moved || k == server_error_kind::ask || k == server_error_kind::try_again ||
         k == server_error_kind::cluster_down;
}

}  // namespace deadbolt::detail
