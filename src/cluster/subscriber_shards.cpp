// The subscriber's sharded links (Redis Cluster's SSUBSCRIBE): one link per master that serves a
// subscribed channel, placed by the channel_router (the cluster topology). Built only with
// DEADBOLT_CLUSTER: without it the subscriber has the classic link alone and refers to none of this.
#include <algorithm>

#include "deadbolt/error.hpp"
#include "pubsub/subscriber.hpp"
#include "pubsub/subscriber_link.hpp"

namespace deadbolt::detail {

std::uint16_t subscriber::sharded_home_of(std::string_view channel) {
  switch (router_->pubsub_mode()) {
    case channel_router::mode::unknown: return no_link;
    case channel_router::mode::classic: return classic_link;
    case channel_router::mode::sharded: break;
  }
  const server_address* owner = router_->channel_master(channel);
  return owner == nullptr ? no_link : open_link(*owner);
}

std::uint16_t subscriber::open_link(const server_address& where) {
  std::uint16_t unused = no_link;
  for (std::uint16_t i = classic_link + 1; i < links_.size(); ++i) {
    if (!links_[i]) {
      if (unused == no_link) unused = i;
    } else if (links_[i]->where == where) {
      return i;
    }
  }
  if (unused == no_link) {
    // As many links as the cluster's node table allows; one per master is all a layout can name.
    if (links_.size() >= links_.capacity()) return no_link;
    unused = static_cast<std::uint16_t>(links_.size());
    links_.emplace_back();
  }
  auto c = std::make_shared<connection>(executor_, ep_,
                                        std::make_unique<static_addresses>(std::vector<server_address>{where}), cfg_,
                                        connection::role::subscriber);
  links_[unused] = std::make_unique<link>(*this, unused, true, where, std::move(c));
  return unused;
}

void subscriber::replace() {
  if (stopped_) return;
  bool moved = false;
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    channel_entry& c = channels_[ch];
    if (c.state == channel_state::free) continue;
    const std::uint16_t home = home_of(c.name);
    if (home == c.link && c.state != channel_state::unplaced) continue;
    const bool wanted = c.waiters > 0 || c.contenders > 0;
    const bool held = c.state == channel_state::subscribing || c.state == channel_state::subscribed;
    if (home != c.link && held && links_[c.link]->conn->ready()) {
      send(c.link, false, c.name);  // its confirmation comes from a link the channel left: ignored
    }
    moved = moved || (home != c.link && c.link != no_link);
    if (!wanted) {
      free_channel(ch);
      continue;
    }
    c.link = home;
    if (home == no_link) {
      c.state = channel_state::unplaced;
    } else {
      subscribe(ch);
    }
  }
  if (moved) arm_sweep();  // closes the links no channel uses any more
}

void subscriber::close_idle_links() {
  for (std::uint16_t l = classic_link + 1; l < links_.size(); ++l) {
    if (!links_[l]) continue;
    const bool used = std::any_of(channels_.begin(), channels_.end(), [l](const channel_entry& c) {
      return c.state != channel_state::free && c.link == l;
    });
    if (!used) links_[l].reset();
  }
}

void subscriber::shard_refused(std::uint16_t l, std::string_view error_text) {
  // The shard does not serve a channel we subscribed there (it moved). Which one the error is about
  // is not said: every channel of this link not confirmed yet is placed again once the router knows more.
  for (auto& c : channels_) {
    if (c.link == l && c.state == channel_state::subscribing) c.state = channel_state::unplaced;
  }
  if (router_->subscription_refused(error_text, links_[l]->where)) return;
  if (!refusal_logged_) {
    refusal_logged_ = true;  // not a redirection (NOPERM, ...): waiters wake by their timers only
    log_refusal(error_text);
  }
}

}  // namespace deadbolt::detail
