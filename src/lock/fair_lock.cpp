// The fair lock (docs/protocol.md §3, Redisson RFairLock): first come, first served, across clients.
//   keys      the bare name (hash, as the reentrant lock), the queue LIST redisson_lock_queue:{name}
//             (owner fields in arrival order), the timeout ZSET redisson_lock_timeout:{name} (owner
//             field -> the client wall-clock ms after which that waiter counts as gone)
//   channels  one per waiter: redisson_lock__channel:{name}:<owner field>; unlock wakes only the head
//   scripts   lua/fair_acquire.lua (takes a place in the queue), lua/fair_try_acquire.lua (a try that
//             does not), lua/fair_unlock.lua, lua/fair_force_unlock.lua, lua/fair_give_up.lua; all
//             share lua/include/fair_queue.lua, whose stale-waiter cleanup runs first in each
//   waiting   park on our own channel for at most the estimate the script returned (capped, since a
//             queue ahead of us gives no exact bound); a waiter that stops waiting without the lock
//             (its wait ran out, it was cancelled, it failed) leaves the queue with fair_give_up.lua,
//             so no queue or timeout entry is left behind.
//   clocks    queue deadlines use the clients' wall clocks (Redisson's design): keep hosts NTP-synced.
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

// The lock is free but someone is ahead of us in the queue: they are about to take it.
constexpr std::int64_t queued_recheck_ms = 50;

class fair final : public lock_protocol {
 public:
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    begin_script(e, r, c.no_wait ? scripts::fair_try_acquire : scripts::fair_acquire, 3, 4);
    e.bulk(n.name).bulk(n.queue).bulk(n.timeouts).bulk(c.lease_ms);
    owner_field(e, c.who);
    if (c.no_wait) {
      e.bulk(c.now_ms).bulk(c.wait_ms);
    } else {
      e.bulk(c.wait_ms).bulk(c.now_ms);
    }
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    begin_script(e, r, scripts::fair_unlock, 5, 6);
    e.bulk(n.name).bulk(n.queue).bulk(n.timeouts).bulk(n.channel).bulk(c.latch);
    e.bulk("0").bulk(c.lease_ms);
    owner_field(e, c.who);
    e.bulk(c.now_ms).bulk(c.publish).bulk(c.latch_ttl_ms);
  }
  void force_unlock(resp::encoder& e, request& r, const lock_names& n, std::string_view now_ms,
                    std::string_view publish) const override {
    begin_script(e, r, scripts::fair_force_unlock, 4, 3);
    e.bulk(n.name).bulk(n.queue).bulk(n.timeouts).bulk(n.channel);
    e.bulk("0").bulk(now_ms).bulk(publish);
  }
  void wait_channel(std::string& out, const lock_names& n, const owner_ref& who) const override {
    out.assign(n.channel).append(":").append(who.client_id).append(":").append(who.owner);
  }
  wait_rules rules() const override {
    wait_rules r = lock_protocol::rules();
    r.leaves_trace = true;  // the queue entry: give_up() removes it
    // The head may take the lock without anyone publishing (e.g. the holder's lease ran out, or the
    // head before us gave up on an old Redisson): a queue ahead of us gives no exact bound.
    r.recheck_caps_park = true;
    return r;
  }
  wait_outcome busy(std::int64_t ttl_ms, const lock_names&, backoff_state&) const override {
    if (ttl_ms == -1) return wait_outcome::busy(-1);  // the holder's key has no TTL: the recheck interval
    return wait_outcome::busy(ttl_ms > 0 ? ttl_ms : queued_recheck_ms);
  }
  void give_up(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c,
               std::string_view publish) const override {
    begin_script(e, r, scripts::fair_give_up, 4, 4);
    e.bulk(n.queue).bulk(n.timeouts).bulk(n.name).bulk(n.channel);
    owner_field(e, c.who);
    e.bulk(c.wait_ms).bulk("0").bulk(publish);
  }
};

}  // namespace

const lock_protocol& fair_protocol() {
  static const fair p;
  return p;
}

}  // namespace deadbolt::detail
