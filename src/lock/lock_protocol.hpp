// What one lock kind sends and how its waiters wait. The generic operations (src/lock/lock_ops.cpp:
// acquire with its wait loop, unlock with its retries, the queries) ask the kind's protocol for each
// command; every kind keeps its keys, scripts and wait strategy in one file:
//   src/lock/reentrant_protocol.cpp   reentrant, fenced and spin locks (docs/protocol.md §2, §5, §6)
//   src/lock/fair_lock.cpp            fair lock (§3)
//   src/lock/read_write_lock.cpp      read and write locks (§4)
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "deadbolt/detail/engine.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "detail/holds.hpp"
#include "detail/request.hpp"
#include "detail/subscriber.hpp"

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

class lock_protocol {
 public:
  /// Which hash field the kind's holds are (and how the watchdog renews them).
  virtual hold_field field() const { return hold_field::plain; }
  /// Writes the owner's hash field as one bulk string.
  void owner_field(resp::encoder& e, const owner_ref& who) const;

  /// The acquire attempt. Its reply: {the owner's new hold count} when acquired ({count, token} for
  /// the fenced lock), else the wait ahead in ms (a TTL, an integer).
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

  /// Waiting: park on a channel (the default), or back off on a timer (spin lock).
  virtual bool waits_on_channel() const { return true; }
  virtual wake_policy wake() const { return wake_policy::one; }
  /// The channel a waiter parks on (the fair lock's waiters each have their own).
  virtual void wait_channel(std::string& out, const lock_names& n, const owner_ref& who) const;
  /// How long to park when the attempt answered `ttl_ms` (< 0 if the lock has no TTL or is gone); 0
  /// means try again at once. The default bounds a wait by the holder's TTL (pub/sub is only a hint).
  virtual std::int64_t park_ms(std::int64_t ttl_ms) const;
  /// A waiter that joined a queue and stops waiting without the lock must leave it (fair lock).
  virtual bool leaves_queue() const { return false; }
  virtual void give_up(resp::encoder&, request&, const lock_names&, const acquire_call&,
                       std::string_view /*publish*/) const {}

 protected:
  ~lock_protocol() = default;
};

/// The protocol of each kind (static instances).
const lock_protocol& protocol_of(lock_kind kind);
/// A protocol whose owner_field() writes holds of this field.
const lock_protocol& protocol_of(hold_field field);
const lock_protocol& reentrant_protocol();
const lock_protocol& fenced_protocol();
const lock_protocol& spin_protocol();
const lock_protocol& fair_protocol();
const lock_protocol& read_protocol();
const lock_protocol& write_protocol();

/// The watchdog's batches (src/lock/renewal.cpp): holds of one renewal kind share a script call.
hold_field renewal_kind(hold_field field);
/// How many holds of `kind` fit a batch of at most `max_keys` keys.
std::size_t renewal_batch_limit(hold_field kind, std::size_t max_keys);
/// Writes the renewal of `holds` (all of `kind`); the reply is one flag per hold.
void encode_renewal(resp::encoder& e, request& r, hold_field kind, const hold* const holds[], std::size_t n,
                    std::string_view lease_ms, std::string_view client_id);

/// A read hold's timeout key prefix, "{name}:<uuid>:<owner>:rwlock_timeout" (docs/protocol.md §4), as one
/// bulk string.
void read_timeout_prefix(resp::encoder& e, std::string_view name, const owner_ref& who);

}  // namespace deadbolt::detail
