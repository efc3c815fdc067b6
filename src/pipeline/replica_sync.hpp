// Replica sync on one server's command connection (config::replica_sync): whether a write that carries
// commands that write a hold ends with `WAIT 1 <timeout>` (the pipeline writes one per write, shared by
// those commands), from what ROLE says of the server's replicas. ROLE is
// asked at login, again at once when a WAIT found no replica, and now and then while none is known
// (one may have come). No I/O, no clock: the connection passes the time and sends the ROLE.
//
// One acknowledging replica is all the check needs (as Redisson's: only zero is a failure), so WAIT
// asks for one: it returns as soon as the fastest replica has the write, and a stalled second replica
// costs nothing. Unless the master is being replaced: a ROLE follows each WAIT (in the same write, so
// no round trip more), and while a replica that left the master may be a master now (replica_roster),
// the acknowledgements count for nothing.
#pragma once

#include <cstdint>
#include <string_view>

#include "pipeline/replica_roster.hpp"
#include "pipeline/role_reader.hpp"

namespace deadbolt::detail {

enum class sync_policy : std::uint8_t {
  off,        ///< never WAIT
  automatic,  ///< WAIT when the server has replicas
  required,   ///< always WAIT: a server without replicas leaves every hold unsynced
};

class replica_sync {
 public:
  /// While no replica is known, ROLE is asked again at most this often (only while holds are written).
  static constexpr std::int64_t reprobe_ns = 10'000'000'000;

  void configure(sync_policy policy, std::int64_t timeout_ms) noexcept {
    policy_ = policy;
    timeout_ms_ = timeout_ms;
  }
  bool enabled() const noexcept { return policy_ != sync_policy::off && !refused_; }
  sync_policy policy() const noexcept { return policy_; }
  std::int64_t timeout_ms() const noexcept { return timeout_ms_; }

  /// How many replicas the WAIT after a synced command asks for: 0 writes none. While the roster
  /// does not trust the master, even one without replicas WAITs: what is written there is not synced
  /// (and the ROLE after the WAIT tells when that changes).
  std::int32_t wanted() const noexcept {
    if (!enabled()) return 0;
    return known_ > 0 || policy_ == sync_policy::required || !roster_.trusted() ? 1 : 0;
  }

  /// ROLE answered (a replica or a sentinel counts no replicas).
  void learned(std::int32_t replicas, std::int64_t now_ns) noexcept {
    known_ = replicas;
    refused_ = false;
    refusal_reported_ = false;
    stale_ = false;
    probing_ = false;
    probed_ns_ = now_ns;
  }
  /// ROLE answered: a master's replicas, or none (a replica, a sentinel, or ROLE refused by an ACL).
  void learned(const role_reader& role, std::int64_t now_ns) {
    learned(!role.error() && role.master() ? role.replicas() : 0, now_ns);
    roster_.listed(role);
  }
  /// Whether a ROLE follows each WAIT: the roster follows this server's replicas (its ROLE answered).
  bool role_after_wait() const noexcept { return enabled() && roster_.tracking(); }
  /// The ROLE after a WAIT answered: the replicas the master lists now.
  void listed_after_wait(const role_reader& role) {
    if (role.error()) return;  // tells nothing; the acknowledgements stand as the roster judged before
    known_ = role.master() ? role.replicas() : 0;
    stale_ = false;  // just asked
    roster_.listed(role);
  }
  /// What a WAIT's `acked` acknowledgements are worth: none while the roster does not trust the master.
  std::int32_t counted(std::int32_t acked) const noexcept { return acked > 0 && !roster_.trusted() ? 0 : acked; }
  replica_roster& roster() noexcept { return roster_; }
  const replica_roster& roster() const noexcept { return roster_; }
  /// A WAIT answered: none acknowledged means the replicas may be gone (ask ROLE again).
  void answered(std::int32_t acked) noexcept {
    if (acked == 0) stale_ = true;
  }
  /// The server refused WAIT (an unknown or disabled command). Automatic: no more WAITs until the next
  /// login (returns true). Required: that is no sync, and WAIT is asked again (returns false).
  bool refused() noexcept {
    if (policy_ == sync_policy::required) return false;
    refused_ = true;
    return true;
  }
  /// Whether a refusal of WAIT is news to the user: true for the first since ROLE last answered (the
  /// login, or a probe at most every reprobe_ns), so that a required WAIT that is refused each time is
  /// not reported each time.
  bool report_refusal() noexcept {
    const bool first = !refusal_reported_;
    refusal_reported_ = true;
    return first;
  }

  /// Whether a ROLE should be sent ahead of the next synced command.
  bool probe_due(std::int64_t now_ns) const noexcept {
    if (!enabled() || probing_) return false;
    return stale_ || known_ < 0 || (known_ == 0 && now_ns - probed_ns_ >= reprobe_ns);
  }
  void probe_sent() noexcept { probing_ = true; }
  /// The ROLE got no usable answer (refused by an ACL, or the connection dropped): no replica is known
  /// until it is asked again.
  void probe_failed(std::int64_t now_ns) noexcept { learned(0, now_ns); }

 private:
  sync_policy policy_ = sync_policy::off;
  std::int64_t timeout_ms_ = 1000;
  std::int32_t known_ = -1;  // replicas ROLE listed; -1: not asked yet
  bool stale_ = false;
  bool probing_ = false;
  bool refused_ = false;
  bool refusal_reported_ = false;
  std::int64_t probed_ns_ = 0;
  replica_roster roster_;
};

}  // namespace deadbolt::detail
