#include "cluster/shard_placement.hpp"

#include <algorithm>

#include "pubsub/subscriber.hpp"

namespace deadbolt::detail {

shard_placement::shard_placement(channel_router& router, std::size_t max_links)
    : router_(router), max_links_(max_links) {
  links_.reserve(max_links);
}

link_id shard_placement::home_of(subscriber& subs, std::string_view channel) {
  switch (router_.pubsub_mode()) {
    case cluster_routing::pubsub::unknown: return no_link;
    case cluster_routing::pubsub::classic: return classic_link;
    case cluster_routing::pubsub::sharded: break;
  }
  const server_address* master = router_.channel_master(channel);
  if (master == nullptr) return no_link;
  for (const shard_link& l : links_) {
    if (l.master == *master) return l.id;
  }
  if (links_.size() >= max_links_) return no_link;  // waits, unplaced, for a layout with fewer masters
  const link_id opened = subs.open_shard_link(*master);
  if (opened != no_link) links_.push_back({opened, *master});
  return opened;
}

void shard_placement::link_in_doubt(link_id) { router_.layout_stale(); }

bool shard_placement::refused(link_id link, std::string_view error_text) {
  for (const shard_link& l : links_) {
    if (l.id == link) return router_.subscription_refused(error_text, l.master);
  }
  return false;
}

void shard_placement::close_idle_links(subscriber& subs) {
  // close_link() refuses a link a channel is on: those stay.
  const auto closed = [&subs](const shard_link& l) { return subs.close_link(l.id); };
  links_.erase(std::remove_if(links_.begin(), links_.end(), closed), links_.end());
}

}  // namespace deadbolt::detail
