// Where requests and subscriptions go: the engine asks the topology, by key, which node serves a
// request and which subscriber serves a channel, and never touches a connection itself. A single
// server (single_node.hpp) is one route; a cluster maps a key's slot to its master.
#pragma once

#include <cstdint>
#include <memory>
#include <string_view>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pipeline/request.hpp"

namespace deadbolt::detail {

class subscriber;

class topology {
 public:
  virtual ~topology() = default;

  /// Sends `r` to the node that serves r.route_key (any node when it is empty), connecting first if
  /// needed. The request's on_done() reports its outcome, never from inside submit().
  virtual void submit(request& r) = 0;
  /// Which keys may share a script call: keys of one route may. A cluster answers the key's hash
  /// slot; a single server 0 for every key, until it refused a script whose keys were in different
  /// slots (cross_slot_refused()), and from then on the key's slot too.
  virtual std::uint32_t route_of(std::string_view key) const = 0;
  /// The node whose connection carries the requests for `key` now: a number below
  /// config::max_cluster_nodes + 1 (a cluster's node table, and one more for keys no node serves yet;
  /// a single server is node 0). The watchdog keeps a window of renewals in flight per node, so that
  /// a node that does not answer holds back only its own (src/engine/renewal_windows.hpp).
  virtual std::uint32_t node_of(std::string_view key) const = 0;
  /// The server refused a script whose keys were in different hash slots (CROSSSLOT): it enforces
  /// slots, as a cluster node, a cluster proxy or an always-clustered managed service reached by
  /// redis:// does. True if route_of() tells slots apart from now on and did not before.
  virtual bool cross_slot_refused() = 0;
  /// The command the scripts publish their messages with: "publish", or "spublish" on a cluster using
  /// sharded pub/sub (decided before the first request is routed). Read by every script call: not
  /// virtual.
  std::string_view publish_command() const { return publish_; }
  /// The subscriber that serves `channel`, created on first use.
  virtual subscriber& subscriber_for(std::string_view channel) = 0;
  /// The subscriber that serves `channel` if it exists yet, else null.
  virtual subscriber* existing_subscriber(std::string_view channel) const = 0;

  /// Every connection that could deliver is up and has nothing queued or in flight (or none could:
  /// a server that is down is not waited for).
  virtual bool settled() const = 0;
  /// Wakes every parked waiter with wake_reason::shutdown; commands keep flowing.
  virtual void stop_subscribers() = 0;
  /// Closes every connection: what is still queued fails with errc::shutting_down.
  virtual void close() = 0;

 protected:
  std::string_view publish_ = "publish";
};

/// The topology that `cfg` describes (cfg is valid: config::validate() filled `ep`).
std::unique_ptr<topology> make_topology(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg);

}  // namespace deadbolt::detail
