// The unlock's decisions, without I/O: what to do after each answer of the release script or of the
// transport. The driver (unlock_op, src/lock/lock_ops.cpp) sends, keeps the latch and the hold table
// and carries out the action this core returns; tests/core/unlock_fsm_test.cpp drives the core with
// no server.
//
// The rules it keeps:
//   - a reply lost in transit (an ambiguous error) is retried with the same latch, so a release that
//     did run answers again as it did, up to `attempts` sends; a client shutting down does not retry;
//   - a release that no replica acknowledged (replica sync) is sent again with the same latch, up to
//     `sync_retries` times; after that the caller hears replicas_not_synced (the release stands);
//   - a release that leaves the server counting holds the caller never had (its last hold, or one it
//     was told it lost) releases those too, each with a new latch, at most `max_surplus` more;
//   - a failed or unknown release takes the hold off the watchdog: it ends with its lease.
#pragma once

#include <cstdint>
#include <system_error>

namespace deadbolt::detail {

/// What the release script answered (scalar_reply, read into the kinds the decisions need).
enum class unlock_reply {
  gone,         // nil: the caller holds nothing (not or no longer)
  released,     // 1: the lock was released (the message is published)
  still_held,   // 0: still held, by the caller (reentrant) or by other readers
  server_error, // an error reply: the server's words are the outcome
  unexpected,   // anything else: a protocol error
};

/// The caller's hold as the client records it (the hold table), looked up when the answer comes.
struct unlock_hold {
  bool known = false;       // the client records a hold of this owner on this lock
  bool lost = false;        // ... which it was told it lost
  std::int32_t count = 0;   // ... its reentrant count
  bool read = false;        // ... and it is a read hold (other readers count on the server too)
};

struct unlock_limits {
  int attempts = 3;       // sends of one release after lost replies
  int max_surplus = 64;   // releases beyond the caller's last hold
  int sync_retries = 0;   // resends of a release no replica acknowledged
};

/// What the driver does next.
struct unlock_action {
  enum class kind {
    send_again,      // the same release, the same latch (a lost reply, or an unacknowledged release)
    release_surplus, // one more release of a hold the caller never had: a new latch
    finish,          // complete the caller with `ec` and `value` (after `change`)
  };
  /// What happens to the caller's recorded hold.
  enum class hold_change {
    none,
    forget,         // the server has none: drop the record
    released,       // released (or the last read hold): drop it and stop renewing it
    one_less,       // a reentrant release: one count less, still held
    stop_renewing,  // failed or unknown: off the watchdog, it ends with its lease
  };
  kind what = kind::finish;
  hold_change change = hold_change::none;
  bool delete_latch = false;  // the release ran: its latch has done its job
  std::error_code ec;         // for finish
  std::int64_t value = 0;     // for finish: 1 when a release ran
};

class unlock_fsm {
 public:
  /// A new unlock: the first send follows.
  void start(const unlock_limits& limits);

  /// The transport failed the send (`closed`: the client is shutting down).
  unlock_action on_failure(std::error_code ec, bool closed);

  /// The script answered. `replicas_unsynced`: replica sync is on and no replica acknowledged it;
  /// `server_error` is the error reply's code for unlock_reply::server_error.
  unlock_action on_reply(unlock_reply reply, std::error_code server_error, bool replicas_unsynced,
                         const unlock_hold& hold, bool closed);

  /// What the caller finally hears for a finish with `ec`: a release that stands on the master only
  /// says replicas_not_synced.
  std::error_code final_error(std::error_code ec) const;

  int sends() const { return attempts_; }
  int surplus_releases() const { return surplus_; }

 private:
  unlock_action finish(std::error_code ec, std::int64_t value, unlock_action::hold_change change,
                       bool delete_latch = false) const;
  unlock_action still_held(const unlock_hold& hold);

  unlock_limits limits_;
  int attempts_ = 0;       // sends of the current release (lost replies)
  int sync_resends_ = 0;   // sent again because no replica acknowledged it
  bool unsynced_ = false;  // ... and none did on the last try either
  int surplus_ = 0;        // holds released beyond the caller's last one
  std::error_code outcome_;  // what the caller hears once the surplus is released
};

}  // namespace deadbolt::detail
