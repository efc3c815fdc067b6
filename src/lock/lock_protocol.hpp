// What one lock kind sends and how its waiters wait. The generic operations (the acquire in
// src/lock/lock_attempt.cpp, run by the wait driver; unlock with its retries and the queries in
// src/lock/lock_ops.cpp) ask the kind's protocol for each command and each wait decision; every kind
// keeps its keys, scripts, reply shape and wait strategy in one file:
//   src/lock/reentrant_protocol.cpp   reentrant, fenced and spin locks (docs/protocol.md §2, §5, §6)
//   src/lock/fair_lock.cpp            fair lock (§3)
//   src/lock/read_write_lock.cpp      read and write locks (§4)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "deadbolt/detail/lock_names.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "engine/holds.hpp"
#include "lock/spin_backoff_sequence.hpp"
#include "pipeline/request.hpp"
#include "pubsub/wake_policy.hpp"
#include "wait/wait_driver.hpp"

namespace deadbolt::detail {

/// Who acts: the pieces of the owner field "<client uuid>:<owner id>".
struct owner_ref {
  std::string_view client_id;
  std::string_view owner;  ///< the owner id in decimal
};

struct acquire_call {
  owner_ref who;
  std::string_view lease_ms;
  std::string_view wait_ms;  ///< fair lock: the waiter timeout
  std::string_view now_ms;   ///< fair lock: the client's wall clock
  bool no_wait = false;      ///< a single attempt (the fair lock's does not join the queue)
};

struct unlock_call {
  owner_ref who;
  std::string_view lease_ms;  ///< restored on a hold that remains
  std::string_view latch;     ///< the unlock latch key (one per unlock, kept across its retries)
  std::string_view latch_ttl_ms;
  std::string_view now_ms;
  std::string_view publish;   ///< "publish" or "spublish"
};

/// The steps of a lock's acquire (src/lock/lock_attempt.cpp): the wait driver knows them by role.
namespace lock_steps {
constexpr wait_step attempt{step_role::attempt, 0, false};
constexpr wait_step baseline{step_role::prepare, 1, false};  ///< the owner's count before the attempt
constexpr wait_step verify{step_role::check, 2, false};      ///< ... after an unanswered attempt
constexpr wait_step refresh{step_role::check, 3, false};     ///< restart the lease of a verified hold
constexpr wait_step fetch_token{step_role::check, 4, false}; ///< a verified fenced hold's token
constexpr wait_step give_up{step_role::leave, 5, false};     ///< leave the fair queue
constexpr wait_step undo{step_role::undo, 6, true};          ///< release an unsynced hold (same latch if resent)
}  // namespace lock_steps

class lock_protocol {
 public:
  /// Which hash field the kind's holds are (and how the watchdog renews them).
  virtual hold_field field() const { return hold_field::plain; }
  /// Writes the owner's hash field as one bulk string.
  void owner_field(resp::encoder& e, const owner_ref& who) const;

  /// The acquire attempt. Its reply: {the owner's new hold count} when acquired ({count, token} when
  /// the kind hands out tokens), else the wait ahead in ms (a TTL, an integer).
  virtual void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const = 0;
  /// Releases one hold. Reply: nil (not the owner), 0 (still held) or 1 (released).
  virtual void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const = 0;
  /// Deletes the lock whoever holds it. Reply: 1 if there was one, else 0.
  virtual void force_unlock(resp::encoder& e, request& r, const lock_names& n, std::string_view now_ms,
                            std::string_view publish) const = 0;
  /// Reply: 1 or 0 (any integer; EXISTS by default).
  virtual void is_locked(resp::encoder& e, request& r, const lock_names& n) const;
  /// Restarts the lease of the owner's hold if it still holds it. Reply: an array with one flag.
  virtual void refresh(resp::encoder& e, request& r, const lock_names& n, const owner_ref& who,
                       std::string_view lease_ms) const;

  /// The fenced lock: an acquisition's reply carries its token too, and one found by the check of an
  /// unanswered attempt reads the token from the counter.
  virtual bool hands_out_tokens() const { return false; }

  /// How its waiters wait: park on the channel (verify an unanswered attempt; a park bounded by what
  /// the attempt answered, else re-check every 5 s), or what the kind says instead.
  virtual wait_rules rules() const;
  virtual wake_policy wake() const { return wake_policy::one; }
  /// The channel a waiter parks on (the fair lock's waiters each have their own).
  virtual void wait_channel(std::string& out, const lock_names& n, const owner_ref& who) const;
  /// What a busy attempt's answer `ttl_ms` (the holder's TTL; < 0 if it has none or is gone) means: how
  /// long to wait (wait_outcome::busy). The default bounds a wait by the holder's TTL (pub/sub is
  /// only a hint). `b` is the wait's backoff (spin lock).
  virtual wait_outcome busy(std::int64_t ttl_ms, const lock_names& n, backoff_state& b) const;
  /// A new waiter queues behind this client's waiters already parked on the channel (they share it).
  virtual bool queues_behind_local_waiters() const { return false; }
  /// A waiter that may have joined a queue and stops waiting without the lock leaves it
  /// (rules().leaves_trace; fair lock).
  virtual void give_up(resp::encoder&, request&, const lock_names&, const acquire_call&,
                       std::string_view /*publish*/) const {}

 protected:
  ~lock_protocol() = default;
};

/// The protocol of a kind known at run time. It links every kind: the engine takes a lock's protocol
/// from its lock_names instead (see protocol_for in deadbolt/detail/engine.hpp); tests use this.
const lock_protocol& protocol_of(lock_kind kind);
/// Writes the owner's hash field of a hold of `field` ("<uuid>:<owner>", a write hold ":write" more).
void write_owner_field(resp::encoder& e, const owner_ref& who, hold_field field);

/// A read hold's timeout key prefix, "{name}:<uuid>:<owner>:rwlock_timeout" (docs/protocol.md §4), as one
/// bulk string.
void read_timeout_prefix(resp::encoder& e, std::string_view name, const owner_ref& who);

}  // namespace deadbolt::detail
