// Where a subscriber's channels are subscribed, when that is not simply its one classic link. The
// subscriber asks a link_placement (if it has one) which of its links a channel belongs on, and tells
// it what the servers said that may change the answer; the placement opens and closes the extra links
// through the subscriber's link API (subscriber::open_shard_link, channels_on, close_link) and calls
// subscriber::replace() whenever its answers may have changed. A subscriber without a placement uses
// its classic link for every channel (a single server, a Sentinel-watched master), and a build that
// never makes a placement links none of the extra links' code.
//
// The sharded one (Redis Cluster's SSUBSCRIBE: a link per master that serves a subscribed channel) is
// src/cluster/shard_placement.hpp.
#pragma once

#include <cstdint>
#include <string_view>

namespace deadbolt::detail {

class subscriber;

/// A subscriber's link: an index in its link table.
using link_id = std::uint16_t;
/// The link every subscriber has: SUBSCRIBE on its address source (a server, a cluster's seeds).
inline constexpr link_id classic_link = 0;
/// No link: the channel's place is not known yet.
inline constexpr link_id no_link = 0xffff;

class link_placement {
 public:
  /// The link `channel` belongs on now: classic_link, a link this placement opened on `subs`, or
  /// no_link while nobody knows yet (the channel waits, unsubscribed, for the next replace()).
  virtual link_id home_of(subscriber& subs, std::string_view channel) = 0;
  /// A link this placement opened lost its connection, or its server dropped a subscription unasked
  /// (the channel's slot moved): where channels belong may have changed. The subscriber has already
  /// marked such a dropped channel unplaced.
  virtual void link_in_doubt(link_id link) = 0;
  /// The server of a link this placement opened refused a subscription with `error_text` (the subscriber
  /// has marked the link's unconfirmed channels unplaced: which one was refused is not said). True if the
  /// placement learns from it (a redirection) and will call replace() when it knows more; false if it
  /// means nothing to the placement (NOPERM, ...): the subscriber logs it, waiters wake by their timers.
  virtual bool refused(link_id link, std::string_view error_text) = 0;
  /// The subscriber's sweep let channels go: close the links this placement opened that no channel uses.
  virtual void close_idle_links(subscriber& subs) = 0;

 protected:
  ~link_placement() = default;
};

}  // namespace deadbolt::detail
