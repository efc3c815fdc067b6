// What the subscriber does for a link_placement (pubsub/link_placement.hpp): the link API it calls
// (replace, open_shard_link, channels_on, close_link), and the shard links it opens, which speak
// SSUBSCRIBE and tell the placement what their servers say. A unit of its own: only a placement refers
// to any of it, so a program whose subscribers have none (a build without Redis Cluster) links none.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "pubsub/subscriber.hpp"

namespace deadbolt::detail {

// A link to a server a placement chose, for sharded pub/sub.
struct subscriber::shard_link final : link {
  shard_link(subscriber& owner, link_id index, std::shared_ptr<connection> c)
      : link(owner, index, std::move(c), "SSUBSCRIBE", "SUNSUBSCRIBE") {}

  void on_disconnected(std::error_code) override { owner.shard_lost(index); }
  void on_connect_failed(std::error_code) override { owner.shard_lost(index); }
  void on_push_node(const resp::node& n, bool end_of_reply) override {
    switch (assemble(n, end_of_reply)) {
      case arrival::partial: break;
      case arrival::refused: owner.shard_refused(index, n.value); break;
      case arrival::complete: owner.shard_push(index, parts[0], parts[1], parts[2]); break;
    }
  }
};

link_id subscriber::home_of(std::string_view channel) {
  return placement_ != nullptr ? placement_->home_of(*this, channel) : classic_link;
}

void subscriber::replace() {
  if (stopped_) return;
  bool moved = false;
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    channel_entry& c = channels_[ch];
    if (c.state == channel_state::free) continue;
    const link_id home = home_of(c.name);
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
  if (moved) arm_sweep();  // the placement closes the links no channel uses any more
}

link_id subscriber::open_shard_link(const server_address& where) {
  link_id unused = no_link;
  for (link_id i = classic_link + 1; i < links_.size(); ++i) {
    if (!links_[i]) {
      unused = i;
      break;
    }
  }
  if (unused == no_link) {
    // Room for config::max_cluster_nodes links besides the classic one: one per master is all a
    // cluster's layout can name.
    if (links_.size() >= links_.capacity()) return no_link;
    unused = static_cast<link_id>(links_.size());
    links_.emplace_back();
  }
  auto c = std::make_shared<connection>(executor_, ep_,
                                        std::make_unique<static_addresses>(std::vector<server_address>{where}), cfg_,
                                        connection::role::subscriber);
  links_[unused] = std::make_unique<shard_link>(*this, unused, std::move(c));
  return unused;
}

std::size_t subscriber::channels_on(link_id l) const {
  return static_cast<std::size_t>(std::count_if(channels_.begin(), channels_.end(), [l](const channel_entry& c) {
    return c.state != channel_state::free && c.link == l;
  }));
}

bool subscriber::close_link(link_id l) {
  if (l == classic_link || l >= links_.size() || !links_[l] || channels_on(l) != 0) return false;
  links_[l].reset();
  return true;
}

void subscriber::shard_lost(link_id l) {
  // As on the classic link, and: a lost master may have failed over. The placement finds out, and
  // replace() moves its channels to the new one.
  if (placement_ != nullptr) placement_->link_in_doubt(l);
}

void subscriber::shard_refused(link_id l, std::string_view error_text) {
  // The shard does not serve a channel we subscribed there (it moved). Which one the error is about
  // is not said: every channel of this link not confirmed yet is placed again once the placement
  // knows more.
  for (auto& c : channels_) {
    if (c.link == l && c.state == channel_state::subscribing) c.state = channel_state::unplaced;
  }
  if (placement_ != nullptr && placement_->refused(l, error_text)) return;
  refused(error_text);
}

void subscriber::shard_push(link_id l, std::string_view kind, std::string_view channel, std::string_view payload) {
  if (!kind.empty() && kind.front() == 's') kind.remove_prefix(1);  // smessage, ssubscribe, sunsubscribe
  const std::uint32_t ch = find_channel(channel);
  if (kind == "unsubscribe" && ch != none && channels_[ch].link == l &&
      channels_[ch].state == channel_state::subscribed && placement_ != nullptr) {
    // Unasked: the shard gave the channel's slot away. Subscribe where the placement says next.
    channels_[ch].state = channel_state::unplaced;
    placement_->link_in_doubt(l);
    return;
  }
  on_push(l, kind, channel, payload);
}

}  // namespace deadbolt::detail
