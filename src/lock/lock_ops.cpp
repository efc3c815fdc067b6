// The lock operations every kind shares besides the acquire (src/lock/lock_attempt.cpp): unlock and
// the queries. What they send comes from the kind's protocol (src/lock/lock_protocol.hpp); what they
// do with the replies is here:
//   unlock    retried with the same request id after a lost reply (the latch makes the retry
//             idempotent); one that fails leaves the watchdog. An unlock that leaves the server
//             counting holds the caller never had (the last of the caller's, or one of a lost lease,
//             or of an acquire whose outcome was unknown) releases those too.
//   queries   one command each (is_locked, hold_count, ...), and the multi lock's member lease.
#include "base/deadline.hpp"
#include "base/outcome.hpp"
#include "base/random.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "engine/op_context.hpp"
#include "lock/lock_ops.hpp"
#include "lock/lock_protocol.hpp"
#include "lock/unlock_fsm.hpp"
#include "memory/op_pool.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

constexpr int unlock_attempts = 3;
// An unlock that finds holds the caller never had releases at most this many more.
constexpr int max_surplus_releases = 64;

// Unlock request ids need only be unique, not secret: the thread's generator, seeded once from the
// platform's random bytes, avoids a system call per unlock.
void next_request_id(char out[32]) {
  static constexpr char hex[] = "0123456789abcdef";
  for (int half = 0; half < 2; ++half) {
    const std::uint64_t z = thread_random();
    for (int i = 0; i < 16; ++i) out[half * 16 + i] = hex[(z >> (i * 4)) & 0xf];
  }
}

}  // namespace

void new_unlock_latch(std::string& out, std::string_view prefix) {
  char id[32];
  next_request_id(id);
  out.assign(prefix).append(":").append(id, sizeof id);
}

// ---- unlock ----------------------------------------------------------------------------------------

class unlock_op final : public request, public operation {
 public:
  explicit unlock_op(op_context& core) : core_(core), holds_(core.held_locks()) { latch_.reserve(96); }

  /// `done` may be null: an internal release nobody waits for.
  void start(const std::shared_ptr<const lock_names>& names, std::int64_t owner, completion* done) {
    start(names, owner, done, false, {});
  }

  /// Gives back an acquisition nobody wants, then completes `then` with (report, 0), whatever the
  /// release answered: the acquire it ends is over only once its trace on the server is gone.
  void start_give_back(const std::shared_ptr<const lock_names>& names, std::int64_t owner, completion& then,
                       std::error_code report) {
    start(names, owner, &then, true, report);
  }

  void cancel() override {}  // an unlock runs to its end

 private:
  void start(const std::shared_ptr<const lock_names>& names, std::int64_t owner, completion* done, bool report_fixed,
             std::error_code report) {
    report_fixed_ = report_fixed;
    fixed_report_ = report;
    names_ = names;
    route_key = names->name;
    proto_ = names->protocol;
    owner_ = owner;
    owner_digits_.set(owner);
    done_ = done;
    unlock_limits limits;
    limits.attempts = unlock_attempts;
    limits.max_surplus = max_surplus_releases;
    limits.sync_retries = core_.settings().sync_retries;
    fsm_.start(limits);
    const std::uint32_t held = holds_.find(names->name, owner, proto_->field());
    lease_.set(held == hold_table::none ? core_.settings().watchdog_ms : holds_[held].lease_ms);
    latch_ttl_.set(core_.settings().latch_ttl_ms);
    new_latch();
    transmit();
  }

  void new_latch() { new_unlock_latch(latch_, names_->latch_prefix); }

  void transmit() {
    syncs_replicas = core_.settings().syncs_replicas;
    now_.set(port::wall_clock_ms());
    reply_.reset();
    core_.submit(*this);
  }

  void encode(resp::encoder& e) override {
    const unlock_call c{{core_.settings().client_id, owner_digits_.view()}, lease_.view(), latch_, latch_ttl_.view(),
                        now_.view(), core_.settings().publish};
    proto_->unlock(e, *this, *names_, c);
  }

  void on_node(const resp::node& n) override { reply_.take(n); }

  void on_done(std::error_code ec) override {
    if (ec) return carry_out(fsm_.on_failure(ec, core_.closed()), hold_table::none);
    const std::uint32_t held = holds_.find(names_->name, owner_, proto_->field());
    unlock_hold hold;
    if (held != hold_table::none) {
      hold.known = true;
      hold.lost = holds_[held].lost;
      hold.count = holds_[held].count;
      hold.read = proto_->field() == hold_field::read;
    }
    carry_out(fsm_.on_reply(reply_of(reply_), reply_.error, replicas_unsynced(), hold, core_.closed()), held);
  }

  static unlock_reply reply_of(const scalar_reply& r) {
    switch (r.what) {
      case scalar_reply::kind::nil: return unlock_reply::gone;
      case scalar_reply::kind::integer: return r.value == 1 ? unlock_reply::released : unlock_reply::still_held;
      case scalar_reply::kind::error: return unlock_reply::server_error;
      default: return unlock_reply::unexpected;
    }
  }

  void carry_out(const unlock_action& a, std::uint32_t held) {
    switch (a.what) {
      case unlock_action::kind::send_again: return transmit();
      case unlock_action::kind::release_surplus:
        new_latch();
        return transmit();
      case unlock_action::kind::finish: break;
    }
    using change = unlock_action::hold_change;
    switch (a.change) {
      case change::none: break;
      case change::forget: holds_.release(held); break;
      case change::released: core_.hold_released(held); break;
      case change::one_less:
        --holds_[held].count;
        --holds_[held].server;
        break;
      case change::stop_renewing: core_.unlock_failed(names_->name, owner_, proto_->field()); break;
    }
    if (a.delete_latch) core_.send_and_forget("DEL", latch_);  // the latch has done its job
    finish(a.ec, a.value);
  }

  void finish(std::error_code ec, std::int64_t value) {
    completion* done = done_;
    done_ = nullptr;
    ++generation;
    names_.reset();
    const std::error_code heard = fsm_.final_error(ec);
    core_.pools().of<unlock_op>().give_back(this);
    if (done == nullptr) return;
    if (report_fixed_) return done->complete(fixed_report_, 0);
    done->complete(heard, value);
  }

  op_context& core_;
  hold_table& holds_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  std::int64_t owner_ = 0;
  decimal owner_digits_;
  decimal lease_;
  decimal latch_ttl_;
  decimal now_;
  std::string latch_;
  unlock_fsm fsm_;
  completion* done_ = nullptr;
  bool report_fixed_ = false;    // a give-back: done_ hears fixed_report_, not the release's outcome
  std::error_code fixed_report_;
  scalar_reply reply_;
};

void give_back_then(op_context& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                    completion& then, std::error_code report) {
  core.pools().of<unlock_op>().take(core)->start_give_back(names, owner, then, report);
}

// ---- queries and force unlock ------------------------------------------------------------------------

class query_op final : public request, public operation {
 public:
  explicit query_op(op_context& core) : core_(core) {}

  void start(const std::shared_ptr<const lock_names>& names, lock_query q, std::int64_t owner, completion& done,
             std::int64_t lease_ms) {
    names_ = names;
    lease_ms_ = lease_ms;
    lease_.set(lease_ms);
    owner_ = owner;
    route_key = names->name;
    proto_ = names->protocol;
    query_ = q;
    owner_digits_.set(owner);
    now_.set(port::wall_clock_ms());
    sent_ns_ = port::monotonic_ns();
    done_ = &done;
    reply_.reset();
    core_.submit(*this);
  }
  void start_ping(completion& done) {
    names_.reset();
    ping_ = true;
    done_ = &done;
    reply_.reset();
    core_.submit(*this);
  }
  void cancel() override {}

 private:
  void encode(resp::encoder& e) override {
    if (ping_) {
      e.command("PING");
      return;
    }
    const owner_ref who{core_.settings().client_id, owner_digits_.view()};
    switch (query_) {
      case lock_query::force_unlock:
        proto_->force_unlock(e, *this, *names_, now_.view(), core_.settings().publish);
        break;
      case lock_query::is_locked: proto_->is_locked(e, *this, *names_); break;
      case lock_query::is_held_by:
        e.array(3).bulk("HEXISTS").bulk(names_->name);
        proto_->owner_field(e, who);
        break;
      case lock_query::hold_count:
        e.array(3).bulk("HGET").bulk(names_->name);
        proto_->owner_field(e, who);
        break;
      case lock_query::remaining_ttl: e.command("PTTL", names_->name); break;
      case lock_query::fencing_token: e.command("GET", names_->token_key); break;
      case lock_query::set_lease: proto_->refresh(e, *this, *names_, who, lease_.view()); break;
      case lock_query::lease_lost:
      case lock_query::valid_for: break;  // answered locally, never sent
    }
  }
  void on_node(const resp::node& n) override {
    if (ping_ && n.depth == 0 && (n.type == resp::type::simple_string || n.type == resp::type::blob_string)) {
      reply_.what = scalar_reply::kind::integer;
      return;
    }
    if (query_ == lock_query::set_lease && n.depth == 1) {  // the renewal script's one flag: {1} or {0}
      resp::node flag = n;
      flag.depth = 0;
      return reply_.take(flag);
    }
    reply_.take(n);
  }
  void on_done(std::error_code ec) override {
    if (ec) return finish(ec, 0);
    switch (reply_.what) {
      case scalar_reply::kind::nil: return finish({}, 0);
      case scalar_reply::kind::integer:
        if (query_ == lock_query::set_lease && reply_.value == 1) {
          core_.lease_restarted(names_->name, owner_, proto_->field(), lease_ms_, sent_ns_);
        }
        return finish({}, reply_.value);
      case scalar_reply::kind::error: return finish(reply_.error, 0);
      default: return finish(errc::protocol_error, 0);
    }
  }
  void finish(std::error_code ec, std::int64_t value) {
    completion* done = done_;
    done_ = nullptr;
    ping_ = false;
    ++generation;
    names_.reset();
    core_.pools().of<query_op>().give_back(this);
    done->complete(ec, value);
  }

  op_context& core_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  lock_query query_ = lock_query::is_locked;
  decimal owner_digits_;
  decimal now_;
  decimal lease_;
  std::int64_t lease_ms_ = 0;
  std::int64_t owner_ = 0;
  std::int64_t sent_ns_ = 0;  // set_lease: the restarted lease runs from here at the latest
  bool ping_ = false;
  completion* done_ = nullptr;
  scalar_reply reply_;
};

// ---- entry points --------------------------------------------------------------------------------------

bool refuse_operation(op_context& core, completion& done) {
  const std::error_code refused = core.refusal();
  if (refused) core.complete_later(done, refused);
  return static_cast<bool>(refused);
}

op_ref start_connect(client_core& engine, completion& done) {
  op_context& core = context_of(engine);
  if (refuse_operation(core, done)) return {};
  query_op* op = core.pools().of<query_op>().take(core);
  op->start_ping(done);
  return {};
}

op_ref start_unlock(client_core& engine, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                    completion& done) {
  op_context& core = context_of(engine);
  if (refuse_operation(core, done)) return {};
  core.pools().of<unlock_op>().take(core)->start(names, owner, &done);
  return {};
}

op_ref start_query(client_core& engine, const std::shared_ptr<const lock_names>& names, lock_query q,
                   std::int64_t owner, completion& done, std::int64_t lease_ms) {
  op_context& core = context_of(engine);
  if (refuse_operation(core, done)) return {};
  if (q == lock_query::lease_lost || q == lock_query::valid_for) {
    const hold_table& holds = core.held_locks();
    const std::uint32_t held = holds.find(names->name, owner, names->protocol->field());
    const std::int64_t now = port::monotonic_ns();
    const lease_margin& margin = core.settings().margin;
    if (q == lock_query::lease_lost) {
      // Lost from the deadline on, also in the moment before the watchdog's timer has marked it so.
      const bool lost = held != hold_table::none &&
                        (holds[held].lost || (watched(holds[held]) && now >= valid_until(holds[held], margin)));
      core.complete_later(done, {}, lost ? 1 : 0);
    } else {
      core.complete_later(done, {}, held == hold_table::none ? 0 : valid_for_ms(holds[held], margin, now));
    }
    return {};
  }
  core.pools().of<query_op>().take(core)->start(names, q, owner, done, lease_ms);
  return {};
}

}  // namespace deadbolt::detail
