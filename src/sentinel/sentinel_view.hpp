// How recent the client's knowledge of the Sentinel group's master is, as a sans-I/O rule (the
// finder, src/sentinel/sentinel_finder.*, feeds it the time). Two things tell the client where the
// master is:
//   - the sentinels asked (SENTINEL GET-MASTER-ADDR-BY-NAME) naming the server the command
//     connection uses, which ROLE confirms: the master is known as of the question;
//   - the +switch-master watch, subscribed and heard from (a message, or the answer to its liveness
//     PING): a sentinel announces a switch on it before it answers anything sent later, so from the
//     moment the subscription took effect to the last time the watch heard from its sentinel, no
//     switch can have passed unnoticed.
// A watch subscribed again after a gap (its sentinel went silent or away) covers nothing before its
// new subscription: the sentinels must be asked once more. When what the client knows is older than
// `stale_after` (config::ping_interval + ping_timeout: the longest a live watch stays unheard), an
// acquire waits until the sentinels were asked and ROLE confirmed the master. Tested without sockets
// (tests/core/sentinel_view_test.cpp).
#pragma once

#include <algorithm>
#include <cstdint>

namespace deadbolt::detail {

class sentinel_view {
 public:
  /// `stale_after_ns` <= 0: the client trusts its watch as before (config::ping_interval 0: no PING
  /// keeps the watch's silence bounded, so the age of the view means nothing).
  explicit sentinel_view(std::int64_t stale_after_ns) noexcept : stale_after_ns_(stale_after_ns) {}

  /// The watch's SUBSCRIBE took effect at `now_ns` on a (new) connection.
  void watch_subscribed(std::int64_t now_ns) noexcept {
    subscribed_ = true;
    subscribed_ns_ = now_ns;
    heard_ns_ = now_ns;
  }
  /// The subscribed watch heard from its sentinel at `now_ns`.
  void watch_heard(std::int64_t now_ns) noexcept {
    if (subscribed_) heard_ns_ = std::max(heard_ns_, now_ns);
  }
  /// The watch's connection is gone: what it heard still counts, nothing after it.
  void watch_lost() noexcept {
    if (!subscribed_) return;
    subscribed_ = false;
    // What the lost subscription covered, up to its last sign of life, is kept only if it joins up
    // with a confirmation; a new subscription starts a new stretch.
    if (subscribed_ns_ <= known_ns_) known_ns_ = std::max(known_ns_, heard_ns_);
  }
  /// The sentinels, asked at `asked_ns`, named the master the client uses, and ROLE confirmed it.
  void confirmed(std::int64_t asked_ns) noexcept { known_ns_ = std::max(known_ns_, asked_ns); }

  /// Up to when no switch can have escaped the client (0: never known).
  std::int64_t known_until() const noexcept {
    if (subscribed_ && subscribed_ns_ <= known_ns_) return std::max(known_ns_, heard_ns_);
    return known_ns_;
  }
  /// Whether the rule is on at all.
  bool enabled() const noexcept { return stale_after_ns_ > 0; }
  /// An acquire may go now on what the client knows.
  bool fresh(std::int64_t now_ns) const noexcept {
    if (!enabled()) return true;
    const std::int64_t known = known_until();
    return known != 0 && now_ns - known <= stale_after_ns_;
  }
  /// The watch is subscribed, but a switch may have come before its subscription took effect: ask
  /// the sentinels now rather than at the next acquire.
  bool ask_due() const noexcept { return enabled() && subscribed_ && subscribed_ns_ > known_ns_; }

 private:
  std::int64_t stale_after_ns_;
  bool subscribed_ = false;
  std::int64_t subscribed_ns_ = 0;
  std::int64_t heard_ns_ = 0;
  std::int64_t known_ns_ = 0;  // from confirmations, and from watch stretches joined to one
};

}  // namespace deadbolt::detail
