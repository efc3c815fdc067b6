// Client configuration and the server URL.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/observability.hpp"
#include "deadbolt/resp/limits.hpp"
#include "deadbolt/tls_config.hpp"

namespace deadbolt {
namespace detail {
class secure_transport;
}

/// Where the server is and how to log in, parsed from a URL:
///   redis://[user[:password]@]host[:port][/db]     (host may be [ipv6])
///   unix://[user[:password]@]/path/to/socket[?db=N]
///   redis+cluster://[user[:password]@]host[:port][,host[:port]...][/]   Redis Cluster: seed nodes
///                                                  (any of its nodes; the layout is asked of them)
///   redis+sentinel://[user[:password]@]host[:port][,host[:port]...]/MASTER_NAME[/db]
///                                                  a master watched by Sentinel: the sentinels (port
///                                                  26379 by default) say which server is the master;
///                                                  the credentials are the master's (config::sentinel_*)
///   rediss://...  rediss+cluster://...  rediss+sentinel://...   the same over TLS (config::tls, docs/tls.md)
///   valkey://  valkeys://  valkey+cluster://  valkey+sentinel://  ...  Valkey's names for the same forms
/// User and password may be percent-encoded. A password without a user logs in as "default".
struct endpoint {
  /// One node named in a cluster URL.
  struct seed {
    std::string host;
    std::uint16_t port = 6379;
  };

  enum class transport { tcp, unix_socket };
  transport kind = transport::tcp;
  std::string host = "127.0.0.1";
  std::uint16_t port = 6379;
  std::string path;  ///< unix socket path
  std::string user;
  std::string password;
  int database = 0;
  /// redis+cluster:// : every seed node, in the URL's order (the first is also host and port).
  std::vector<seed> cluster_seeds;
  /// redis+sentinel:// : the sentinels, in the URL's order, and the name they know the master by.
  std::vector<seed> sentinels;
  std::string sentinel_master;
  /// rediss:// or rediss+cluster:// : every connection speaks TLS.
  bool tls = false;
  /// The TLS context: set by the client from config::tls, shared by its connections; not for users.
  std::shared_ptr<const detail::secure_transport> tls_context;

  bool is_cluster() const noexcept { return !cluster_seeds.empty(); }
  bool is_sentinel() const noexcept { return !sentinels.empty(); }
  /// "host:port" or the socket path, for messages.
  std::string describe() const;
};

/// Parses `url` into `out`; errc::invalid_url if it is not one of the forms above.
std::error_code parse_url(std::string_view url, endpoint& out);

/// Redis Cluster: which pub/sub carries the messages that wake waiters (docs/cluster.md). Every client
/// of a lock must use the same, Java ones included (Redisson's shardedSubscriptionMode): a client that
/// subscribes one way while its peers publish the other way loses wake-ups (its waiters then wake only
/// when the lease runs out). Single servers always use classic pub/sub, as Redisson does.
enum class pubsub_mode : std::uint8_t {
  automatic,  ///< sharded if the cluster has it (PUBSUB SHARDNUMSUB works: Redis 7+), as Redisson's AUTO
  sharded,    ///< SSUBSCRIBE on the master of the channel's slot, SPUBLISH in the scripts (Redis 7+)
  classic,    ///< SUBSCRIBE / PUBLISH: a message reaches every node of the cluster
};

/// Replica sync (Redisson's checkLockSyncedSlaves; docs/replication.md): after a script that takes,
/// releases or renews a hold, the client waits (WAIT 1 <timeout>, on the same connection) until a
/// replica has the write, so that a failover does not silently drop a fresh lock.
enum class replica_sync_mode : std::uint8_t {
  automatic,  ///< when the master has replicas (ROLE lists one): Redisson's default
  on,         ///< always: a master without replicas leaves every acquire unsynced (it fails)
  off,        ///< never: one round trip less, and no protection against a failover's loss
};

struct config {
  /// The server; see endpoint.
  std::string url = "redis://127.0.0.1:6379";
  /// Sent with CLIENT SETNAME (HELLO ... SETNAME) so the connections are recognisable.
  std::string client_name = "deadbolt";

  std::chrono::milliseconds connect_timeout{5000};
  /// How long a request may wait for its reply (or for a connection) before it fails.
  std::chrono::milliseconds command_timeout{3000};
  /// The lease used when none is given; the watchdog renews such locks every third of it.
  std::chrono::milliseconds watchdog_timeout{30000};
  /// The client's own deadline for every hold (docs/locks/reentrant_lock.md, "How long the hold is
  /// valid"): the send time of the request that last confirmed it (the acquire, or a renewal) + its
  /// lease - the margin, on the monotonic clock. The margin is `lease * clock_drift_factor +
  /// lease_margin` (Redlock's rule: 1% + 2 ms by default), so that a server clock running faster than
  /// ours by less than the factor cannot expire the hold before the client has stopped counting on it.
  /// At the deadline, without a newer confirmation, the hold is lost on the client: the lease-lost
  /// handler is called and lease_lost() says so. `async_valid_for()` tells how long is left.
  /// Valid: lease_margin >= 0, 0 <= clock_drift_factor < 0.5, and the margin of watchdog_timeout less
  /// than a third of it (the watchdog renews every third).
  std::chrono::milliseconds lease_margin{2};
  double clock_drift_factor = 0.01;
  /// The part of `lease` the client does not count on: `lease * clock_drift_factor + lease_margin`
  /// (rounded up). For leases the client does not track itself, a permit-expirable semaphore's
  /// permits: one confirmed by a request sent at T is valid until T + lease - margin_of(lease).
  std::chrono::milliseconds margin_of(std::chrono::milliseconds lease) const {
    const double drift = static_cast<double>(lease.count()) * clock_drift_factor;
    const auto whole = static_cast<std::chrono::milliseconds::rep>(drift);
    return lease_margin + std::chrono::milliseconds(whole + (static_cast<double>(whole) < drift ? 1 : 0));
  }
  /// Fair lock: how long a waiter's place in the queue lasts when its own wait is unbounded (Redisson's
  /// fairLockWaitTimeout). A waiter that waits longer is dropped and rejoins at the back.
  std::chrono::milliseconds fair_wait_timeout{300000};
  /// Reconnect backoff: starts at the minimum, doubles up to the maximum, with jitter.
  std::chrono::milliseconds reconnect_min{50};
  std::chrono::milliseconds reconnect_max{2000};
  /// Liveness of the subscriber connections (waiters' pub/sub, a cluster's shard links, the Sentinel
  /// watch), which otherwise send nothing after SUBSCRIBE and so would never notice a server that went
  /// silent (paused, hung, cut off without a reset): one that has heard nothing for `ping_interval`
  /// sends PING; if nothing arrives within `ping_timeout` after it, the connection is dropped and made
  /// again, and its channels are subscribed again (waiters re-check the lock). Behind Sentinel the
  /// two also bound how long a client acquires on the master it knows without having heard from the
  /// sentinels (docs/sentinel.md). `ping_interval` 0 turns the checks off (Redisson's
  /// pingConnectionInterval, which defaults to 30 s and uses the command timeout as the deadline).
  std::chrono::milliseconds ping_interval{1000};
  std::chrono::milliseconds ping_timeout{2000};

  /// Fixed capacities, allocated once when the client is built. A full table is an error code.
  std::size_t max_channels = 256;    ///< distinct channels subscribed at once
  std::size_t max_waiters = 256;     ///< callers waiting for a lock at once
  std::size_t max_held_locks = 1024; ///< locks held under the watchdog at once
  /// Redis Cluster: the nodes (masters, and the seeds) the client keeps connections to at most.
  std::size_t max_cluster_nodes = 16;
  /// Sentinel: the user and password the sentinels want (Redisson's sentinelUsername and
  /// sentinelPassword); empty: none. The URL's credentials are the master's.
  std::string sentinel_user;
  std::string sentinel_password;
  /// Replica sync: when to WAIT, and how long (Redisson's slavesSyncTimeout). An acquire that no
  /// replica acknowledged is released and tried again up to replica_sync_retries times (Redisson's
  /// retryAttempts), each after a pause of one to two replica_sync_retry_delay (Redisson's default
  /// retryDelay); then it fails with errc::replicas_not_synced. An unlock is sent again as often (its
  /// latch makes that safe); a renewal is logged.
  replica_sync_mode replica_sync = replica_sync_mode::automatic;
  std::chrono::milliseconds replica_sync_timeout{1000};
  int replica_sync_retries = 4;
  std::chrono::milliseconds replica_sync_retry_delay{1000};
  /// Redis Cluster: classic or sharded pub/sub; the default matches Redisson's default.
  pubsub_mode cluster_pubsub = pubsub_mode::automatic;
  /// Bounds on replies; the read buffer is sized from max_bulk_length.
  resp::limits reply_limits{};

  /// TLS for rediss:// URLs: CA, client certificate, server name, verification (docs/tls.md).
  tls_config tls;

  /// Logs and metrics (deadbolt/observability.hpp, docs/observability.md). Unset, they cost one branch
  /// where an event happens; set, they are called on the client's executor and must not block.
  log_hook log;
  /// Messages below this level are neither formatted nor passed to `log`.
  log_level log_threshold = log_level::info;
  /// Shared by every copy of this config (and so by the clients built from them).
  std::shared_ptr<metrics_hook> metrics;

  /// Checks ranges and the URL; fills `ep` with the parsed endpoint.
  std::error_code validate(endpoint& ep) const;
  /// What validate() refuses, in words, naming the field: "watchdog_timeout: must be at least 30ms",
  /// "url: the port '99999' is not a number from 1 to 65535", "tls: ca_file '/etc/ca.pem': cannot
  /// read it: No such file or directory". Empty when the config is valid. (It reads the TLS files
  /// again, as validate() does.)
  std::string why_invalid() const;
};

}  // namespace deadbolt
