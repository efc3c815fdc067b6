// Where a cluster's channels are subscribed: the subscriber's link_placement (pubsub/link_placement.hpp)
// for a cluster client. With sharded pub/sub a channel goes on a link to the master that serves its slot
// (SSUBSCRIBE there), opened on first use and closed by the sweep once no channel is on it; with classic
// pub/sub on the subscriber's classic link (the seeds: a classic message reaches every node); while the
// layout or the pub/sub mode is not known, nowhere yet. What the layout and the mode are is the
// channel_router's to say (the cluster topology, from cluster_routing); this keeps which link goes to
// which master, and passes on what the links' servers said.
#pragma once

#include <cstddef>
#include <string_view>
#include <vector>

#include "base/server_address.hpp"
#include "cluster/cluster_routing.hpp"
#include "pubsub/link_placement.hpp"

namespace deadbolt::detail {

/// The cluster's answers about channels (cluster_topology). It calls subscriber::replace() whenever
/// they may have changed: a new layout, the pub/sub mode decided.
class channel_router {
 public:
  /// How channels are subscribed: unknown until the cluster's layout and pub/sub mode are known.
  virtual cluster_routing::pubsub pubsub_mode() const = 0;
  /// The master that serves `channel`'s slot in the layout, or null: no layout yet, or no master
  /// for the slot. Whether a command connection to it is up does not matter.
  virtual const server_address* channel_master(std::string_view channel) const = 0;
  /// A shard dropped a subscription, or a link to a master was lost: read the layout again.
  virtual void layout_stale() = 0;
  /// A shard (`from`) refused a subscription with `error_text`. True if it was a redirection (MOVED,
  /// ASK, TRYAGAIN, CLUSTERDOWN): the router learns from it and calls replace() when it knows more.
  virtual bool subscription_refused(std::string_view error_text, const server_address& from) = 0;

 protected:
  ~channel_router() = default;
};

class shard_placement final : public link_placement {
 public:
  /// At most `max_links` links to masters at a time (config::max_cluster_nodes: one per master is all
  /// a layout can name).
  shard_placement(channel_router& router, std::size_t max_links);

  link_id home_of(subscriber& subs, std::string_view channel) override;
  void link_in_doubt(link_id link) override;
  bool refused(link_id link, std::string_view error_text) override;
  void close_idle_links(subscriber& subs) override;

  /// How many links to masters are open.
  std::size_t links() const noexcept { return links_.size(); }

 private:
  struct shard_link {
    link_id id;
    server_address master;
  };

  channel_router& router_;
  std::size_t max_links_;
  std::vector<shard_link> links_;  // the links this placement opened (at most max_links_)
};

}  // namespace deadbolt::detail
