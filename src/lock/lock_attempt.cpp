// A lock's acquire, every kind's, as the attempt the wait driver runs (src/engine/wait_op.*). What the
// kinds share is here; what differs (script, reply shape, wait strategy, the fair queue's give-up) is
// the kind's protocol (src/lock/lock_protocol.hpp):
//   steps     baseline (HGET: the owner's count on the server, when the hold table cannot vouch for
//             it) → attempt (the kind's script) → done, or busy: the kind says how long to wait.
//   counts    the script answers the owner's new count; the hold table keeps it beside the count the
//             caller was told of. A re-entry may extend a watchdog hold's lease, never shorten it.
//   ambiguity an unanswered attempt is checked, never re-run: verify (HGET) compares the owner's count
//             with the one before; more means it ran (only this owner changes its count). Refresh then
//             restarts the lease (the attempt may be older than a renewal period, after an outage),
//             and is the write whose WAIT confirms the found hold on a replica (replica sync: the
//             wait driver's confirm step; a hold no replica acknowledged is undone and tried again, as
//             a fresh one is). A fenced hold then reads its token (fetch_token). A check that fails
//             leaves the outcome unknown: the table remembers, so the next acquire reads the baseline
//             first and the owner's last unlock releases whatever the server counts.
//   sync      replica sync: the wait driver judges the WAIT after the attempt and after refresh; the
//             undo of an unsynced hold is the unlock script with a latch of its own (kept if resent).
//   keeping   an acquisition the table cannot track (full) or nobody wants (cancelled, shutdown) is
//             released again (an unlock nobody waits for).
#include <algorithm>

#include "base/deadline.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "lock/acquire_reply.hpp"
#include "lock/lock_ops.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "wait/wait_op.hpp"

namespace deadbolt::detail {
namespace {

class lock_attempt final : public wait_attempt {
 public:
  explicit lock_attempt(wait_op_base& op) : op_(op), core_(op.core) {
    channel_.reserve(96);
    undo_latch_.reserve(96);
    latch_ttl_.set(core_.settings().latch_ttl_ms);
  }

  void start(const std::shared_ptr<const lock_names>& names, std::int64_t owner, std::int64_t wait_ms,
             std::int64_t lease_ms, completion& done) {
    names_ = names;
    op_.route_key = names->name;
    proto_ = names->protocol;
    backoff_ = backoff_state{};
    owner_ = owner;
    owner_digits_.set(owner);
    requested_lease_ms_ = lease_ms;
    no_wait_ = wait_ms == 0;
    queue_wait_.set(wait_ms > 0 ? std::min(wait_ms, max_lease_ms) : core_.settings().fair_wait_ms);
    done_ = &done;
    server_count_ = 0;
    proto_->wait_channel(channel_, *names, who());
    const std::int64_t now = port::monotonic_ns();
    started_ns_ = now;
    const hold_table& holds = core_.held_locks();
    const std::uint32_t held = holds.find(names->name, owner, proto_->field());
    const bool live = held != hold_table::none && !holds[held].lost && !lapsed(holds[held], now);
    // A re-entry may extend a watchdog hold's lease, never shorten it (the watchdog renews on its own
    // schedule: a shorter TTL would let another client in between two renewals).
    const std::int64_t watchdog_ms = core_.settings().watchdog_ms;
    std::int64_t sent_lease = lease_ms > 0 ? lease_ms : watchdog_ms;
    if (live && holds[held].watchdog) sent_lease = std::max(sent_lease, watchdog_ms);
    lease_.set(sent_lease);
    const bool reentry = live && holds[held].count > 0;
    const bool baseline_known = held == hold_table::none || (live && !holds[held].uncertain);
    server_before_ = baseline_known && held != hold_table::none ? holds[held].server : 0;

    wait_setup s;
    s.rules = proto_->rules();
    s.rules.syncs_replicas = true;  // undone by the unlock script
    s.rules.undo = lock_steps::undo;
    s.rules.confirms = true;  // a verified hold is written again by refresh: its WAIT confirms it
    s.rules.confirm = lock_steps::refresh;
    s.wait_ms = wait_ms;
    s.prepare = baseline_known ? nullptr : &lock_steps::baseline;
    // Queued behind this client's other waiters, the next unlock message wakes one of them, not us:
    // re-check after the recheck interval at the latest.
    s.queue_first = proto_->queues_behind_local_waiters() && !reentry;
    s.channel = channel_;
    s.wake = proto_->wake();
    op_.begin(*this, s);
  }

 private:
  owner_ref who() const { return {core_.settings().client_id, owner_digits_.view()}; }
  acquire_call call() const { return {who(), lease_.view(), queue_wait_.view(), now_.view(), no_wait_}; }

  void sending(const wait_step& s) override {
    reply_.reset();
    attempt_reply_.reset(proto_->hands_out_tokens());
    if (s == lock_steps::attempt || s == lock_steps::refresh) {
      sent_ns_ = port::monotonic_ns();
      now_.set(port::wall_clock_ms());
    }
    if (s == lock_steps::attempt) undo_latch_ready_ = false;
    if (s == lock_steps::undo && !undo_latch_ready_) {
      // The hold is on the master only: the undo releases it with a latch of its own, kept if resent.
      undo_latch_ready_ = true;
      new_unlock_latch(undo_latch_, names_->latch_prefix);
      core_.observe.log(log_level::warning, "no replica acknowledged the hold of ", names_->name,
                        " (config::replica_sync): released, to be tried again");
    }
  }

  void encode(const wait_step& s, resp::encoder& e, request& r) override {
    if (s == lock_steps::attempt) return proto_->acquire(e, r, *names_, call());
    if (s == lock_steps::refresh) return proto_->refresh(e, r, *names_, who(), lease_.view());
    if (s == lock_steps::fetch_token) {
      e.command("GET", names_->token_key);
      return;
    }
    if (s == lock_steps::give_up) return proto_->give_up(e, r, *names_, call(), core_.settings().publish);
    if (s == lock_steps::undo) {
      return proto_->unlock(e, r, *names_,
                            {who(), lease_.view(), undo_latch_, latch_ttl_.view(), now_.view(), core_.settings().publish});
    }
    e.array(3).bulk("HGET").bulk(names_->name);  // baseline, verify: the owner's count
    proto_->owner_field(e, who());
  }

  void on_node(const wait_step& s, const resp::node& n) override {
    if (s == lock_steps::attempt) return attempt_reply_.take(n);
    if (s == lock_steps::refresh && n.depth == 1) {  // the renew script's one flag
      reply_.what = n.type == resp::type::integer && parse_int(n.value, reply_.value) ? scalar_reply::kind::integer
                                                                                     : scalar_reply::kind::unexpected;
      return;
    }
    reply_.take(n);
  }

  wait_outcome read(const wait_step& s) override {
    if (s == lock_steps::attempt) {
      const wait_outcome o = attempt_reply_.outcome(*proto_, *names_, backoff_);
      if (o.what == wait_outcome::kind::acquired) server_count_ = attempt_reply_.count();
      return o;
    }
    if (s == lock_steps::undo) return wait_outcome::done(0);  // the driver reads no more of it
    if (reply_.what == scalar_reply::kind::error) return wait_outcome::failed(reply_.error);
    const bool count = reply_.what == scalar_reply::kind::integer || reply_.what == scalar_reply::kind::nil;
    const std::int64_t value = reply_.what == scalar_reply::kind::integer ? reply_.value : 0;
    if (s == lock_steps::baseline) {
      if (!count) return wait_outcome::failed(errc::protocol_error);
      server_before_ = value;
      return wait_outcome::next(lock_steps::attempt);
    }
    if (s == lock_steps::verify) {
      if (!count) return wait_outcome::unknown();  // an answer that is not a count
      if (value <= server_before_) {
        server_before_ = value;
        return wait_outcome::busy(0);  // it did not run (or was undone by expiry): try again
      }
      server_count_ = value;
      // Ours. Refresh restarts the lease (after an outage the attempt can be older than the watchdog
      // can bridge), and its write is what a WAIT can confirm: the HGET wrote nothing.
      return wait_outcome::next(lock_steps::refresh);
    }
    if (s == lock_steps::refresh) {
      if (reply_.what != scalar_reply::kind::integer) return wait_outcome::unknown();
      if (reply_.value != 1) return wait_outcome::busy(0);  // lapsed between the check and the refresh
      return owned();
    }
    if (s == lock_steps::fetch_token) {
      if (reply_.what != scalar_reply::kind::integer || reply_.value < 1) return wait_outcome::unknown();
      return wait_outcome::acquired(reply_.value);
    }
    return wait_outcome::done(0);  // give_up: best effort (stale entries expire anyway)
  }

  acquire_sample sample(bool acquired, std::error_code ec) const {
    return {names_->name, std::chrono::nanoseconds(port::monotonic_ns() - started_ns_), acquired, ec};
  }
  std::error_code note_full_table() const {
    if (const metrics_calls* m = core_.observe.metrics()) m->on_table_full(table_kind::held_locks);
    core_.observe.log(log_level::warning, "held-lock table full (config::max_held_locks): gave back ", names_->name);
    return errc::held_table_full;
  }

  // A verified hold is ours; the fenced lock's token is the counter's value (only a holder increments it).
  wait_outcome owned() const {
    return proto_->hands_out_tokens() ? wait_outcome::next(lock_steps::fetch_token) : wait_outcome::acquired(1);
  }

  void conclude(const wait_action& end, std::error_code ec, wait_op_base& op) override {
    std::int64_t value = end.value;
    bool give_back = false;
    if (end.unknown) core_.note_unknown(names_->name, owner_, proto_->field(), requested_lease_ms_, sent_ns_);
    if (end.acquired) {
      const std::uint32_t held =
          core_.record_acquired(names_->name, owner_, proto_->field(), requested_lease_ms_, sent_ns_, server_count_);
      if (held == hold_table::none || end.give_back) {
        // Untracked (table full) or unwanted: give it back (shutdown sends it before it closes).
        give_back = true;
        if (held == hold_table::none) ec = note_full_table();
        value = 0;
      }
    }
    if (const metrics_calls* m = core_.observe.metrics()) m->on_acquire(sample(value != 0, ec));
    completion* done = done_;
    done_ = nullptr;
    std::shared_ptr<const lock_names> names = std::move(names_);
    op_context& core = core_;
    const std::int64_t owner = owner_;
    op.recycle();
    // A caller who cancelled hears it once the hold is given back: by then the lock is as it was.
    if (give_back) return give_back_then(core, names, owner, *done, ec);
    done->complete(ec, value);
  }

  wait_op_base& op_;
  op_context& core_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  std::string channel_;  // the channel this waiter parks on
  std::int64_t owner_ = 0;
  decimal owner_digits_;
  std::int64_t requested_lease_ms_ = 0;
  decimal lease_;
  decimal queue_wait_;  // fair lock: how long our queue entry lasts
  decimal now_;         // fair lock: the wall clock when the attempt was sent
  std::string undo_latch_;  // replica sync: the latch of the undo of an unsynced attempt
  bool undo_latch_ready_ = false;  // ... made for the current attempt's hold (a resent undo keeps it)
  decimal latch_ttl_;
  bool no_wait_ = false;
  std::int64_t server_before_ = 0;  // the owner's count on the server before our attempt
  std::int64_t server_count_ = 0;   // ... once acquired
  std::int64_t sent_ns_ = 0;
  std::int64_t started_ns_ = 0;  // when the caller asked (for config::metrics)
  backoff_state backoff_;
  acquire_reply attempt_reply_;
  scalar_reply reply_;
  completion* done_ = nullptr;
};

}  // namespace

op_ref start_acquire(client_core& engine, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                     std::int64_t wait_ms, std::int64_t lease_ms, completion& done) {
  op_context& core = context_of(engine);
  if (refuse_operation(core, done)) return {};
  if (!valid_lease_ms(lease_ms)) {  // checked before anything is written (lua/include/lease_guard.lua)
    core.complete_later(done, errc::invalid_argument);
    return {};
  }
  return core.pools().of<wait_op<lock_attempt>>().take(core)->start(names, owner, wait_ms, lease_ms, done);
}

}  // namespace deadbolt::detail
