// The reentrant lock (docs/protocol.md §2), its fenced variant (§6) and the spin lock (§5), in one place:
//   keys      the bare name (hash: field "<client uuid>:<owner>" = hold count),
//             channel redisson_lock__channel:{name} (message "0"),
//             unlock latch redisson_unlock_latch:{name}:<request id>
//   scripts   lua/lock_acquire.lua, lua/lock_unlock.lua, lua/lock_force_unlock.lua (+ lock_renew.lua)
//   fenced    acquired by lua/fenced_acquire.lua, which also INCRs the token counter
//             redisson_lock_token:{name} (no TTL; only a Java delete() removes it) and returns
//             {count, token} or the holder's pttl
//   spin      the same hash and acquire script, but no channel: lua/spin_unlock.lua releases without
//             publishing, force unlock is a plain DEL, and a waiter backs off on a timer (spin_backoff)
//   waiting   park on the channel for at most the holder's TTL (pub/sub is only a hint), try again;
//             a new waiter queues behind this client's waiters already parked (reentrant, fenced).
// Also the defaults every kind starts from.
#include "base/keys.hpp"
#include "base/random.hpp"
#include "deadbolt/error.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

class reentrant final : public lock_protocol {
 public:
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    begin_script(e, r, scripts::lock_acquire, 1, 2);
    e.bulk(n.name).bulk(c.lease_ms);
    owner_field(e, c.who);
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    begin_script(e, r, scripts::lock_unlock, 3, 5);
    e.bulk(n.name).bulk(n.channel).bulk(c.latch);
    e.bulk("0").bulk(c.lease_ms);
    owner_field(e, c.who);
    e.bulk(c.publish).bulk(c.latch_ttl_ms);
  }
  void force_unlock(resp::encoder& e, request& r, const lock_names& n, std::string_view,
                    std::string_view publish) const override {
    begin_script(e, r, scripts::lock_force_unlock, 2, 2);
    e.bulk(n.name).bulk(n.channel).bulk("0").bulk(publish);
  }
  bool queues_behind_local_waiters() const override { return true; }
};

class fenced final : public lock_protocol {
 public:
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    begin_script(e, r, scripts::fenced_acquire, 2, 2);
    e.bulk(n.name).bulk(n.token_key).bulk(c.lease_ms);
    owner_field(e, c.who);
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    reentrant_protocol().unlock(e, r, n, c);
  }
  void force_unlock(resp::encoder& e, request& r, const lock_names& n, std::string_view now_ms,
                    std::string_view publish) const override {
    reentrant_protocol().force_unlock(e, r, n, now_ms, publish);
  }
  bool hands_out_tokens() const override { return true; }
  bool queues_behind_local_waiters() const override { return true; }
};

class spin final : public lock_protocol {
 public:
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    reentrant_protocol().acquire(e, r, n, c);
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    begin_script(e, r, scripts::spin_unlock, 2, 3);
    e.bulk(n.name).bulk(c.latch).bulk(c.lease_ms);
    owner_field(e, c.who);
    e.bulk(c.latch_ttl_ms);
  }
  void force_unlock(resp::encoder& e, request&, const lock_names& n, std::string_view,
                    std::string_view) const override {
    e.command("DEL", n.name);  // no channel to tell
  }
  wait_rules rules() const override {
    wait_rules r = lock_protocol::rules();
    r.parks = false;  // nobody publishes: sleep the backoff
    return r;
  }
  wait_outcome busy(std::int64_t ttl_ms, const lock_names& n, backoff_state& b) const override {
    if (ttl_ms == 0 || ttl_ms == -2) return wait_outcome::busy(0);  // just expired or vanished
    return wait_outcome::busy(next_backoff_ms(n.backoff, b, thread_random()));
  }
};

}  // namespace

// ---- the defaults ------------------------------------------------------------------------------------

void write_owner_field(resp::encoder& e, const owner_ref& who, hold_field field) {
  if (field == hold_field::write) {
    e.bulk_concat({who.client_id, ":", who.owner, ":write"});
  } else {
    e.bulk_concat({who.client_id, ":", who.owner});
  }
}

void lock_protocol::owner_field(resp::encoder& e, const owner_ref& who) const { write_owner_field(e, who, field()); }

void lock_protocol::is_locked(resp::encoder& e, request&, const lock_names& n) const {
  e.command("EXISTS", n.name);
}

void lock_protocol::refresh(resp::encoder& e, request& r, const lock_names& n, const owner_ref& who,
                            std::string_view lease_ms) const {
  begin_script(e, r, scripts::lock_renew, 1, 2);
  e.bulk(n.name).bulk(lease_ms);
  owner_field(e, who);
}

void lock_protocol::wait_channel(std::string& out, const lock_names& n, const owner_ref&) const {
  out.assign(n.channel);
}

wait_rules lock_protocol::rules() const {
  wait_rules r;
  r.verifiable = true;  // the owner's hold count tells whether an unanswered attempt ran
  r.first = lock_steps::attempt;
  r.verify = lock_steps::verify;
  r.leave = lock_steps::give_up;
  return r;
}

wait_outcome lock_protocol::busy(std::int64_t ttl_ms, const lock_names&, backoff_state&) const {
  if (ttl_ms == 0 || ttl_ms == -2) return wait_outcome::busy(0);  // just expired or vanished
  return wait_outcome::busy(ttl_ms > 0 ? ttl_ms : -1);             // no TTL: the recheck interval
}

const lock_protocol& reentrant_protocol() {
  static const reentrant p;
  return p;
}
const lock_protocol& fenced_protocol() {
  static const fenced p;
  return p;
}
const lock_protocol& spin_protocol() {
  static const spin p;
  return p;
}

}  // namespace deadbolt::detail
