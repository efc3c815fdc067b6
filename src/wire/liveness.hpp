// Whether a subscriber connection's server is still there, as a sans-I/O rule (no clock, no timer:
// the connection feeds it the time). A subscriber connection sends nothing after SUBSCRIBE, and a
// server that goes silent without closing the socket (SIGSTOP, a hung host, a partition that drops
// packets) would leave it waiting for messages forever. So: whatever the server sends counts as a
// sign of life; after `interval` without one the connection sends PING (answered in subscribed mode
// too, in RESP2 and RESP3); if nothing at all arrives within `timeout` after that PING, the server is
// taken for dead and the connection is dropped and made again. A live server is thus never silent
// for longer than interval + timeout without being caught (docs/sentinel.md relies on that bound).
// Tested without sockets (tests/core/liveness_test.cpp).
#pragma once

#include <cstdint>

namespace deadbolt::detail {

class liveness {
 public:
  enum class verdict : std::uint8_t {
    wait,  ///< nothing to do until next_check()
    ping,  ///< send PING now (then check again at next_check())
    dead,  ///< the PING went unanswered: drop the connection
  };

  /// `interval_ns` 0 turns the rule off (check() always answers wait, next_check() 0).
  liveness(std::int64_t interval_ns, std::int64_t timeout_ns) noexcept
      : interval_ns_(interval_ns), timeout_ns_(timeout_ns) {}

  bool enabled() const noexcept { return interval_ns_ > 0; }

  /// The connection is ready (logged in): that counts as hearing from the server.
  void start(std::int64_t now_ns) noexcept {
    running_ = enabled();
    heard_ns_ = now_ns;
    pinged_ = false;
  }
  /// The connection is gone: no checks until the next start().
  void stop() noexcept { running_ = false; }
  bool running() const noexcept { return running_; }

  /// Bytes came from the server.
  void heard(std::int64_t now_ns) noexcept {
    if (now_ns > heard_ns_) heard_ns_ = now_ns;
  }
  std::int64_t last_heard() const noexcept { return heard_ns_; }

  /// What to do at `now_ns` (call it at next_check(), or any time).
  verdict check(std::int64_t now_ns) noexcept {
    if (!running_) return verdict::wait;
    if (pinged_) {
      if (heard_ns_ >= ping_ns_) {
        pinged_ = false;  // answered (or something else came): alive
      } else if (now_ns - ping_ns_ >= timeout_ns_) {
        running_ = false;
        return verdict::dead;
      } else {
        return verdict::wait;
      }
    }
    if (now_ns - heard_ns_ < interval_ns_) return verdict::wait;
    pinged_ = true;
    ping_ns_ = now_ns;
    return verdict::ping;
  }

  /// When check() next has something to decide (0: never, the rule is not running).
  std::int64_t next_check() const noexcept {
    if (!running_) return 0;
    return pinged_ ? ping_ns_ + timeout_ns_ : heard_ns_ + interval_ns_;
  }

 private:
  std::int64_t interval_ns_;
  std::int64_t timeout_ns_;
  bool running_ = false;
  std::int64_t heard_ns_ = 0;
  bool pinged_ = false;       // a PING is out and nothing has come since
  std::int64_t ping_ns_ = 0;  // when it went out
};

}  // namespace deadbolt::detail
