// Least privilege: the Redis ACL grants (commands, key patterns, channel patterns) that deadbolt needs to
// use one lock, semaphore or latch of a given name, and nothing more (docs/acl.md). For an allow-list ACL
// user: `ACL SETUSER <user> resetkeys resetchannels -@all <grants...>`.
//
// Redis checks the keys a script is given (EVALSHA's KEYS, which must be granted read-write: EVAL's key
// arguments are read-write to the ACL) and every command a script calls, with its keys and channels. So
// the grants include the lock's channel as a key too (the unlock scripts take it in KEYS), the commands
// the scripts call, and, as an ACL cannot allow a command inside scripts only, those commands are
// allowed on the granted keys outside scripts as well.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/config.hpp"

namespace deadbolt {

/// The object kinds whose grants differ (the multi and red locks are their members' reentrant locks).
enum class acl_object : std::uint8_t {
  lock,                 ///< reentrant_lock (docs/protocol.md §2)
  fenced_lock,          ///< fenced_lock: the lock and its token counter (§6)
  spin_lock,            ///< spin_lock: the lock's hash, no pub/sub (§5)
  fair_lock,            ///< fair_lock: its queue, deadlines and one channel per waiter (§3)
  read_write_lock,      ///< read_write_lock, both halves: its read holds' timeout keys (§4)
  semaphore,            ///< semaphore (§8)
  expirable_semaphore,  ///< expirable_semaphore: its permits' ZSET (§9)
  count_down_latch,     ///< count_down_latch (§10)
};

/// What else the client's connection needs, beyond the object's own scripts.
struct acl_options {
  /// redis+cluster:// : CLUSTER SHARDS / SLOTS (the layout), ASKING (a slot being moved) and, with
  /// cluster_pubsub automatic, PUBSUB SHARDNUMSUB (the sharded pub/sub probe).
  bool cluster = false;
  /// On a cluster, which pub/sub the waiters use (config::cluster_pubsub): sharded grants SSUBSCRIBE,
  /// SUNSUBSCRIBE and SPUBLISH, classic SUBSCRIBE, UNSUBSCRIBE and PUBLISH, automatic both. A single
  /// server always uses classic pub/sub. A server before Redis 7 has no sharded pub/sub, and its ACL
  /// SETUSER refuses to grant commands it does not know: give classic for it.
  pubsub_mode cluster_pubsub = pubsub_mode::automatic;
  /// config::replica_sync not off: ROLE at login and WAIT after the scripts (docs/replication.md). Without
  /// them the client works, unsynced (ROLE refused: no replicas known).
  bool replica_sync = true;
  /// A database other than 0 in the URL: SELECT.
  bool select = false;
  /// client::inspect() of the name (lua/inspect.lua): every key a name can have, read at once.
  bool inspect = false;
};

/// A set of ACL rules, each one `ACL SETUSER` argument: "+evalsha", "+client|setname",
/// "~redisson_lock__channel:{orders}", "&redisson_lock__channel:{orders}". Adding keeps the first
/// occurrence of each rule, in order: commands, then key patterns, then channel patterns.
class acl_grants {
 public:
  /// The grants that `kind` named `name` needs (keys and channels as exact patterns: glob characters in
  /// the name are escaped; see acl_glob_escape for whitespace).
  void add(acl_object kind, std::string_view name, const acl_options& options = {});
  /// One command ("get", "client|setname"): "+get".
  void add_command(std::string_view command);
  /// A key pattern, glob characters meant as such ("deadbolt_holder:{orders}:*"): "~...".
  void add_key_pattern(std::string_view pattern);
  /// A channel pattern: "&...".
  void add_channel_pattern(std::string_view pattern);

  /// The rules, one ACL SETUSER argument each.
  std::vector<std::string> rules() const;
  /// The rules on one line, separated by spaces, each quoted as redis-cli and ACL files read them
  /// (double quotes with \" \\ \xHH) where it has a space, a quote, a backslash or a non-printable byte.
  std::string text() const;

 private:
  std::vector<std::string> commands_, keys_, channels_;
};

/// `pattern` matching exactly `literal` in Redis' glob: a backslash before each of * ? [ ] \ .
std::string acl_glob_escape(std::string_view literal);

/// The whole allow-list rule for one object: "resetkeys resetchannels -@all " + its grants' text(), to
/// follow `ACL SETUSER <user>` (a new user also needs `on` and a password). For several objects, add()
/// each to one acl_grants.
std::string acl_rule(acl_object kind, std::string_view name, const acl_options& options = {});

}  // namespace deadbolt
