// The operations every lock kind shares: acquire (a wait loop), unlock and the queries. What they send
// comes from the kind's protocol (src/lock/lock_protocol.hpp); what they do with the replies is here:
//   waiting   try the acquire script; if busy, park on the kind's channel for at most what the script
//             said (pub/sub is only a hint) and try again when woken; a spin lock backs off on a timer.
//   counts    the acquire script answers the owner's new count on the server; the hold table keeps
//             it beside the count the caller was told of. When the table cannot vouch for the
//             server's count (a lost lease, a fixed lease that ran out, an earlier unknown outcome)
//             the acquire reads it first. An unlock that leaves the server counting holds the caller
//             never had (the last of the caller's, or one of a lost lease) releases those too.
//   ambiguity an acquire whose outcome is unknown (timeout, dropped connection) is never re-run: we
//             read our own hold count instead and compare it with the count before (and if it is
//             ours but that took over a renewal period, restart its lease). A waiter keeps waiting
//             through a connection outage, and through LOADING / BUSY replies. Unlock is retried
//             with the same request id; the latch makes the retry idempotent; one that fails
//             leaves the watchdog.
//   giving up a fair-lock waiter that ends without the lock leaves the queue before it completes.
#include <chrono>

#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "detail/client_core.hpp"
#include "detail/deadline.hpp"
#include "detail/outcome.hpp"
#include "detail/script_call.hpp"
#include "lock/lock_protocol.hpp"
#include "lock/spin_backoff_sequence.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

// Queued behind this client's other waiters: the next unlock message wakes one of them, not us.
constexpr std::int64_t queued_recheck_ms = 5'000;
constexpr int unlock_attempts = 3;
// A server loading its dataset or running a long script (LOADING, BUSY) is asked again this often.
constexpr std::int64_t busy_retry_ms = 250;
// An unlock that finds holds the caller never had releases at most this many more.
constexpr int max_surplus_releases = 64;

// Backoff jitter: any cheap per-thread pseudo-random number will do.
std::uint64_t jitter_random() {
  thread_local std::uint64_t state = static_cast<std::uint64_t>(port::monotonic_ns()) | 1;
  state ^= state << 13;  // xorshift64
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

// Unlock request ids need only be unique, not secret: a per-thread generator seeded once from the
// platform's random bytes avoids a system call per unlock.
void next_request_id(char out[32]) {
  thread_local std::uint64_t state = [] {
    std::uint64_t seed = 0;
    if (!port::random_bytes(&seed, sizeof seed)) seed = static_cast<std::uint64_t>(port::monotonic_ns());
    return seed;
  }();
  static constexpr char hex[] = "0123456789abcdef";
  for (int half = 0; half < 2; ++half) {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15ull);  // splitmix64
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    for (int i = 0; i < 16; ++i) out[half * 16 + i] = hex[(z >> (i * 4)) & 0xf];
  }
}

}  // namespace

// ---- acquire ---------------------------------------------------------------------------------------

class acquire_op final : public request, public waiter, public operation {
 public:
  explicit acquire_op(client_core& core) : core_(core), timer_(core.executor) { channel_.reserve(96); }

  void start(const std::shared_ptr<const lock_names>& names, std::int64_t owner, std::int64_t wait_ms,
             std::int64_t lease_ms, completion& done) {
    names_ = names;
    route_key = names->name;
    proto_ = &protocol_of(names->kind);
    fenced_ = names->kind == lock_kind::fenced;
    backoff_ = backoff_state{};
    token_ = 0;
    owner_ = owner;
    owner_digits_.set(owner);
    requested_lease_ms_ = lease_ms;
    no_wait_ = wait_ms == 0;
    queue_wait_.set(wait_ms > 0 ? std::min(wait_ms, max_lease_ms) : core_.cfg.fair_wait_timeout.count());
    deadline_ns_ = deadline_after_ms(wait_ms);
    done_ = &done;
    cancelled_ = false;
    waited_ = false;
    queued_ = false;
    proto_->wait_channel(channel_, *names, who());
    const std::int64_t now = port::monotonic_ns();
    const std::uint32_t held = core_.holds.find(names->name, owner, proto_->field());
    const bool live = held != hold_table::none && !core_.holds[held].lost && !client_core::lapsed(core_.holds[held], now);
    // A re-entry may extend a watchdog hold's lease, never shorten it (the watchdog renews on its own
    // schedule: a shorter TTL would let another client in between two renewals).
    std::int64_t sent_lease = lease_ms > 0 ? lease_ms : core_.watchdog_ms();
    if (live && core_.holds[held].watchdog) sent_lease = std::max(sent_lease, core_.watchdog_ms());
    lease_.set(sent_lease);
    reentry_ = live && core_.holds[held].count > 0;
    baseline_known_ = held == hold_table::none || (live && !core_.holds[held].uncertain);
    server_before_ = baseline_known_ && held != hold_table::none ? core_.holds[held].server : 0;
    const bool shares_channel = names->kind == lock_kind::reentrant || names->kind == lock_kind::fenced;
    subscriber* subs = core_.existing_subscriptions(channel_);
    if (shares_channel && !no_wait_ && !reentry_ && subs && subs->has_contenders(channel_)) {
      // Others of this client already wait for this lock: queue behind them rather than barge in
      // (the next unlock message wakes them in order; the one woken tries).
      seen_messages_ = subs->messages_on(channel_);
      return park(queued_recheck_ms * ms_to_ns);
    }
    attempt();
  }

  void cancel() override {
    if (phase_ == phase::parked) {
      core_.subscriptions(channel_).cancel(*this);
    } else if (phase_ == phase::backoff) {
      cancelled_ = true;
      timer_.cancel();  // its handler finishes with operation_aborted
    } else {
      cancelled_ = true;  // acted on when the reply comes
    }
  }

 private:
  enum class phase { idle, baseline, attempt, verify, refresh, fetch_token, give_up, parked, backoff };

  owner_ref who() const { return {core_.id, owner_digits_.view()}; }

  /// Tries the acquire script; first reads the server's count if the table cannot vouch for it (the
  /// verify step of an ambiguous attempt compares with it).
  void attempt() {
    if (!baseline_known_) {
      reply_.reset();
      return submit(phase::baseline);
    }
    send_script(phase::attempt);
  }

  // The check found the hold ours, but the script ran at some unknown time since the attempt was sent.
  // After an outage that can be longer ago than the watchdog can bridge (it would count the lease from
  // the attempt and find it lapsed before renewing): restart the lease now, if the hold is still ours.
  void refresh() { send_script(phase::refresh); }

  void send_script(phase p) {
    phase_ = p;
    send_script_body = false;
    reply_.reset();
    sent_ns_ = port::monotonic_ns();
    now_.set(port::wall_clock_ms());
    subscriber* subs = proto_->waits_on_channel() ? core_.existing_subscriptions(channel_) : nullptr;
    seen_messages_ = subs ? subs->messages_on(channel_) : 0;
    submit(p);
  }

  void submit(phase p) {
    phase_ = p;
    runs_script = false;  // set again by encode() if it writes a script
    core_.submit(*this);
  }

  acquire_call call() const { return {who(), lease_.view(), queue_wait_.view(), now_.view(), no_wait_}; }

  void encode(resp::encoder& e) override {
    switch (phase_) {
      case phase::refresh: return proto_->refresh(e, *this, *names_, who(), lease_.view());
      case phase::verify:
      case phase::baseline:
        e.array(3).bulk("HGET").bulk(names_->name);
        return proto_->owner_field(e, who());
      case phase::fetch_token: e.command("GET", names_->token_key); return;
      case phase::give_up: return proto_->give_up(e, *this, *names_, call(), core_.publish_command);
      default: return proto_->acquire(e, *this, *names_, call());
    }
  }

  void on_node(const resp::node& n) override {
    if (phase_ == phase::refresh && n.depth == 1) {  // the renew script's one flag
      reply_.what = n.type == resp::type::integer && parse_int(n.value, reply_.value) ? scalar_reply::kind::integer
                                                                                     : scalar_reply::kind::unexpected;
      return;
    }
    if (phase_ != phase::attempt) return reply_.take(n);
    // Acquired: {the owner's new count} ({count, token} for the fenced lock), kept as nil + count.
    // Busy: the wait ahead (a TTL), an integer.
    if (n.depth == 0) {
      items_ = 0;
      server_count_ = 0;
      token_ = 0;
      if (n.type == resp::type::null) {  // Redisson's answer, never ours
        reply_.what = scalar_reply::kind::unexpected;
        return;
      }
      if (n.type != resp::type::array) return reply_.take(n);
      reply_.what = n.size == (fenced_ ? 2u : 1u) ? scalar_reply::kind::nil : scalar_reply::kind::unexpected;
      return;
    }
    std::int64_t v = 0;
    if (n.depth != 1 || n.type != resp::type::integer || !parse_int(n.value, v) || v < 1) {
      reply_.what = scalar_reply::kind::unexpected;  // only a positive count and token are an acquisition
      return;
    }
    (items_++ == 0 ? server_count_ : token_) = v;
  }

  void on_done(std::error_code ec) override {
    if (phase_ == phase::give_up) return finish(outcome_, 0);  // best effort: stale entries expire anyway
    if (!ec && reply_.what == scalar_reply::kind::error && reply_.error == errc::server_busy) {
      // Refused before it ran (LOADING, BUSY): a waiter asks again within its wait; a check that
      // must resolve an ambiguous attempt asks again regardless.
      const bool resolving = phase_ == phase::verify || phase_ == phase::refresh || phase_ == phase::fetch_token;
      if (resolving || (!no_wait_ && !cancelled_ && before_deadline())) return retry_later(phase_);
    }
    if (ec) {
      if (phase_ == phase::attempt && ambiguous(ec)) {
        // The script may have run. Ask instead of running it again (Redisson #7367).
        if (!no_wait_) queued_ = queued_ || proto_->leaves_queue();
        reply_.reset();
        return submit(phase::verify);
      }
      if (waited_ && !cancelled_ && !core_.stopped && transient(ec) && before_deadline()) {
        // A waiter keeps its place through a connection outage: it asks again (the request waits for
        // the connection to come back) until its own deadline. An ambiguous attempt stays ambiguous:
        // keep asking for the hold count, never re-run the script.
        reply_.reset();
        return resume(phase_);
      }
      // A check that could not be made leaves the outcome unknown, whatever broke the connection.
      const bool checking = phase_ == phase::verify || phase_ == phase::refresh || phase_ == phase::fetch_token;
      if (checking && transient(ec)) return unknown();
      return not_acquired(ec);
    }
    if (reply_.what == scalar_reply::kind::error) return not_acquired(reply_.error);
    if (phase_ == phase::baseline) {
      if (reply_.what != scalar_reply::kind::integer && reply_.what != scalar_reply::kind::nil) {
        return not_acquired(errc::protocol_error);
      }
      server_before_ = reply_.what == scalar_reply::kind::integer ? reply_.value : 0;
      baseline_known_ = true;
      return attempt();
    }
    if (phase_ == phase::fetch_token) {
      if (reply_.what != scalar_reply::kind::integer || reply_.value < 1) return unknown();
      token_ = reply_.value;
      return acquired();
    }
    if (phase_ == phase::verify) {
      // A check answered with something else than a count leaves the acquire's outcome unknown.
      if (reply_.what != scalar_reply::kind::integer && reply_.what != scalar_reply::kind::nil) return unknown();
      const std::int64_t count = reply_.what == scalar_reply::kind::integer ? reply_.value : 0;
      // Only this owner changes its count (expiry only ever to 0): more than before means it ran.
      if (count <= server_before_) {
        server_before_ = count;
        return busy(0);  // it did not run (or was undone by expiry): try again
      }
      server_count_ = count;
      // Ours. If the attempt was sent longer ago than a renewal period, refresh the lease first.
      const std::int64_t lease_ms = requested_lease_ms_ > 0 ? requested_lease_ms_ : core_.watchdog_ms();
      if (port::monotonic_ns() - sent_ns_ >= lease_ms * ms_to_ns / 3) return refresh();
      return owned();
    }
    if (phase_ == phase::refresh) {
      if (reply_.what != scalar_reply::kind::integer) return unknown();
      if (reply_.value != 1) return busy(0);  // lapsed between the check and the refresh
      return owned();
    }
    switch (reply_.what) {
      case scalar_reply::kind::nil: return acquired();
      case scalar_reply::kind::integer:
        if (!no_wait_) queued_ = queued_ || proto_->leaves_queue();
        return busy(reply_.value);
      default: return not_acquired(errc::protocol_error);
    }
  }

  // The hold is ours: done, or (fenced) fetch its token first.
  void owned() {
    if (!fenced_) return acquired();
    // Ours: the counter's value is our token (only a holder increments it, and we hold it).
    reply_.reset();
    submit(phase::fetch_token);
  }

  /// The outcome stays unknown: the table remembers that, so the next acquire reads the server's count
  /// first and the owner's last unlock releases whatever the server counts.
  void unknown() {
    core_.note_unknown(names_->name, owner_, proto_->field(), requested_lease_ms_, sent_ns_);
    not_acquired(errc::outcome_unknown);
  }

  void acquired() {
    const std::uint32_t held =
        core_.record_acquired(names_->name, owner_, proto_->field(), requested_lease_ms_, sent_ns_, server_count_);
    if (held == hold_table::none || cancelled_ || core_.stopped) {
      // We cannot track it (table full) or nobody wants it any more: give it back (shutdown sends it
      // before it closes the connection).
      release_quietly();
      if (held == hold_table::none) return finish(errc::held_table_full, 0);
      return finish(core_.stopped ? make_error_code(errc::shutting_down) : make_error_code(asio::error::operation_aborted), 0);
    }
    finish({}, fenced_ ? token_ : 1);
  }

  void busy(std::int64_t ttl_ms) {
    if (cancelled_) return not_acquired(asio::error::operation_aborted);
    if (core_.stopped) return not_acquired(errc::shutting_down);
    if (no_wait_) return finish({}, 0);
    if (!before_deadline()) return not_acquired({});
    if (!proto_->waits_on_channel()) {
      if (ttl_ms == 0 || ttl_ms == -2) return attempt();  // just expired or vanished
      return back_off();
    }
    const std::int64_t wait_ms = proto_->park_ms(ttl_ms);
    if (wait_ms == 0) return attempt();
    park(wait_ms * ms_to_ns);
  }

  /// Waits for an unlock message, at most `wait_ns` (and never past the deadline), then tries again.
  void park(std::int64_t wait_ns) {
    if (deadline_ns_ >= 0) wait_ns = std::min(wait_ns, deadline_ns_ - port::monotonic_ns());
    phase_ = phase::parked;
    waited_ = true;
    if (auto ec = core_.subscriptions(channel_).wait(*this, channel_, proto_->wake(),
                                                     std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0)),
                                                     seen_messages_)) {
      not_acquired(ec);
    }
  }

  bool before_deadline() const { return deadline_ns_ < 0 || port::monotonic_ns() < deadline_ns_; }

  /// Spin lock: sleeps the next backoff pause (never past the deadline), then tries again.
  void back_off() {
    pause(next_backoff_ms(names_->backoff, backoff_, jitter_random()) * ms_to_ns, phase::attempt);
  }

  /// Sends the `p` step again after a pause (a waiter's pause never runs past its deadline).
  void retry_later(phase p) { pause(busy_retry_ms * ms_to_ns, p); }

  void pause(std::int64_t wait_ns, phase next) {
    if (deadline_ns_ >= 0 && next == phase::attempt) wait_ns = std::min(wait_ns, deadline_ns_ - port::monotonic_ns());
    phase_ = phase::backoff;
    resume_ = next;
    waited_ = true;
    timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0)));
    // The core owns this op (its pool): keep the core alive until the handler has run.
    timer_.async_wait([this, self = core_.shared_from_this()](std::error_code ec) {
      if (phase_ != phase::backoff) return;
      const bool waiting = resume_ == phase::attempt || resume_ == phase::baseline;
      if (core_.stopped && waiting) return not_acquired(errc::shutting_down);
      // A cancelled wait ends here; a check of an attempt that may have run goes on to its answer.
      if ((ec || cancelled_) && waiting) return not_acquired(asio::error::operation_aborted);
      resume(resume_);  // busy() ends a spent wait
    });
  }

  void resume(phase p) {
    reply_.reset();
    switch (p) {
      case phase::attempt:
      case phase::baseline: return attempt();
      case phase::refresh: return refresh();
      default: return submit(p);
    }
  }

  void on_wake(wake_reason why) override {
    switch (why) {
      case wake_reason::shutdown: return not_acquired(errc::shutting_down);  // leaves a fair queue first
      case wake_reason::cancelled: return not_acquired(asio::error::operation_aborted);
      default: return attempt();  // message, timeout or resubscription: re-check (busy() ends a spent wait)
    }
  }

  void release_quietly();

  /// Ends without the lock (`ec` empty: the wait ran out). A fair-lock waiter leaves the queue first.
  void not_acquired(std::error_code ec) {
    if (!queued_ || core_.closed()) return finish(ec, 0);
    outcome_ = ec;
    queued_ = false;
    withdraw();
    reply_.reset();
    submit(phase::give_up);
  }

  /// Stops contending on the lock's channel (after the last wake-up, never while parked).
  void withdraw() {
    if (!contending) return;
    if (subscriber* subs = core_.existing_subscriptions(channel_)) subs->withdraw(*this);
  }

  void finish(std::error_code ec, std::int64_t value) {
    withdraw();
    completion* done = done_;
    done_ = nullptr;
    phase_ = phase::idle;
    ++generation;
    names_.reset();
    core_.pools.of<acquire_op>().give_back(this);
    done->complete(ec, value);
  }

  client_core& core_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  std::string channel_;  // the channel this waiter parks on
  std::int64_t owner_ = 0;
  decimal owner_digits_;
  std::int64_t requested_lease_ms_ = 0;
  decimal lease_;
  decimal queue_wait_;  // fair lock: how long our queue entry lasts
  decimal now_;         // fair lock: the wall clock when the attempt was sent
  bool no_wait_ = false;
  std::int64_t deadline_ns_ = -1;
  bool reentry_ = false;          // the owner already holds it (as far as the table can tell)
  bool baseline_known_ = true;    // server_before_ is the server's count before our attempt
  std::int64_t server_before_ = 0;
  std::int64_t server_count_ = 0;  // the owner's count on the server once acquired
  std::int64_t sent_ns_ = 0;
  completion* done_ = nullptr;
  phase phase_ = phase::idle;
  bool cancelled_ = false;
  bool waited_ = false;  // found the lock taken and parked at least once
  bool queued_ = false;  // may have an entry in a fair lock's queue
  std::error_code outcome_;  // what to report after leaving the queue
  std::uint64_t seen_messages_ = 0;  // the channel's message count when the last attempt was sent
  bool fenced_ = false;
  backoff_state backoff_;
  asio::steady_timer timer_;  // spin lock: the backoff pause; a pause after LOADING / BUSY
  phase resume_ = phase::attempt;  // what the pause ends in
  std::int64_t token_ = 0;
  std::size_t items_ = 0;
  scalar_reply reply_;
};

// ---- unlock ----------------------------------------------------------------------------------------

class unlock_op final : public request, public operation {
 public:
  explicit unlock_op(client_core& core) : core_(core) { latch_.reserve(96); }

  /// `done` may be null: an internal release nobody waits for.
  void start(const std::shared_ptr<const lock_names>& names, std::int64_t owner, completion* done) {
    names_ = names;
    route_key = names->name;
    proto_ = &protocol_of(names->kind);
    owner_ = owner;
    owner_digits_.set(owner);
    done_ = done;
    attempts_ = 0;
    surplus_releases_ = 0;
    outcome_ = {};
    const std::uint32_t held = core_.holds.find(names->name, owner, proto_->field());
    lease_.set(held == hold_table::none ? core_.watchdog_ms() : core_.holds[held].lease_ms);
    latch_ttl_.set(core_.latch_ttl_ms());
    new_latch();
    send();
  }

  void cancel() override {}  // an unlock runs to its end

 private:
  void new_latch() {
    char id[32];
    next_request_id(id);
    latch_.assign(names_->latch_prefix).append(":").append(id, sizeof id);
  }

  void send() {
    ++attempts_;
    send_script_body = false;
    now_.set(port::wall_clock_ms());
    reply_.reset();
    core_.submit(*this);
  }

  void encode(resp::encoder& e) override {
    const unlock_call c{{core_.id, owner_digits_.view()}, lease_.view(), latch_, latch_ttl_.view(), now_.view(),
                        core_.publish_command};
    proto_->unlock(e, *this, *names_, c);
  }

  void on_node(const resp::node& n) override { reply_.take(n); }

  void on_done(std::error_code ec) override {
    if (ec) {
      // Same request id: if the first attempt ran, the latch answers for it.
      if (ambiguous(ec) && attempts_ < unlock_attempts && !core_.closed()) return send();
      // Unknown or failed: either way the hold leaves the watchdog and ends with its lease.
      core_.unlock_failed(names_->name, owner_, proto_->field());
      return finish(surplus_releases_ > 0 ? outcome_ : ec, surplus_releases_ > 0 ? 1 : 0);
    }
    const std::uint32_t held = core_.holds.find(names_->name, owner_, proto_->field());
    const bool lost = held != hold_table::none && core_.holds[held].lost;
    switch (reply_.what) {
      case scalar_reply::kind::nil:
        if (held != hold_table::none) core_.holds.release(held);
        if (surplus_releases_ > 0) return finish(outcome_, 1);  // gone meanwhile: nothing left to release
        return finish(lost ? errc::lease_lost : errc::not_owner, 0);
      case scalar_reply::kind::integer:
        if (reply_.value == 1) {
          if (held != hold_table::none) core_.holds.release(held);
          core_.send_and_forget("DEL", latch_);  // the latch has done its job
          // A hold the owner was told it lost is reported lost, whatever the server still had.
          return finish(surplus_releases_ > 0 ? outcome_ : lost ? make_error_code(errc::lease_lost) : std::error_code(), 1);
        }
        return still_held(held);
      case scalar_reply::kind::error: return finish(reply_.error, 0);
      default: return finish(errc::protocol_error, 0);
    }
  }

  /// Still held: by us (reentrant), or by other readers after our last read hold.
  void still_held(std::uint32_t held) {
    if (held != hold_table::none && surplus_releases_ == 0) {
      hold& h = core_.holds[held];
      if (!h.lost && h.count > 1) {
        --h.count;
        --h.server;
        return finish({}, 0);
      }
      if (proto_->field() == hold_field::read) {  // other readers' holds count here too
        const bool lost = h.lost;
        core_.holds.release(held);
        return finish(lost ? errc::lease_lost : std::error_code(), 0);
      }
    }
    if (held == hold_table::none && surplus_releases_ == 0) return finish({}, 0);  // not ours to judge
    // The caller's last hold (or one it was told it lost), yet the server counts more: holds from an
    // acquire whose outcome was unknown, or a lease declared lost that was not. Release those too,
    // each with its own latch, or the lock would outlive its holder.
    if (surplus_releases_ == 0) outcome_ = core_.holds[held].lost ? make_error_code(errc::lease_lost) : std::error_code();
    if (++surplus_releases_ > max_surplus_releases) {
      core_.unlock_failed(names_->name, owner_, proto_->field());
      return finish(outcome_, 1);
    }
    attempts_ = 0;
    new_latch();
    send();
  }

  void finish(std::error_code ec, std::int64_t value) {
    completion* done = done_;
    done_ = nullptr;
    ++generation;
    names_.reset();
    core_.pools.of<unlock_op>().give_back(this);
    if (done != nullptr) done->complete(ec, value);
  }

  client_core& core_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  std::int64_t owner_ = 0;
  decimal owner_digits_;
  decimal lease_;
  decimal latch_ttl_;
  decimal now_;
  std::string latch_;
  int attempts_ = 0;
  int surplus_releases_ = 0;  // holds released beyond the caller's last one
  std::error_code outcome_;   // what the caller hears once the surplus is released
  completion* done_ = nullptr;
  scalar_reply reply_;
};

void acquire_op::release_quietly() {
  core_.pools.of<unlock_op>().take(core_)->start(names_, owner_, nullptr);
}

// ---- queries and force unlock ------------------------------------------------------------------------

class query_op final : public request, public operation {
 public:
  explicit query_op(client_core& core) : core_(core) {}

  void start(const std::shared_ptr<const lock_names>& names, lock_query q, std::int64_t owner, completion& done,
             std::int64_t lease_ms) {
    names_ = names;
    lease_.set(lease_ms);
    route_key = names->name;
    proto_ = &protocol_of(names->kind);
    query_ = q;
    owner_digits_.set(owner);
    now_.set(port::wall_clock_ms());
    done_ = &done;
    runs_script = false;  // set by encode() if it writes a script
    send_script_body = false;
    reply_.reset();
    core_.submit(*this);
  }
  void start_ping(completion& done) {
    names_.reset();
    ping_ = true;
    done_ = &done;
    runs_script = false;
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
    const owner_ref who{core_.id, owner_digits_.view()};
    switch (query_) {
      case lock_query::force_unlock:
        proto_->force_unlock(e, *this, *names_, now_.view(), core_.publish_command);
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
      case lock_query::lease_lost: break;  // answered locally, never sent
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
      case scalar_reply::kind::integer: return finish({}, reply_.value);
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
    core_.pools.of<query_op>().give_back(this);
    done->complete(ec, value);
  }

  client_core& core_;
  std::shared_ptr<const lock_names> names_;
  const lock_protocol* proto_ = nullptr;
  lock_query query_ = lock_query::is_locked;
  decimal owner_digits_;
  decimal now_;
  decimal lease_;
  bool ping_ = false;
  completion* done_ = nullptr;
  scalar_reply reply_;
};

// ---- entry points --------------------------------------------------------------------------------------

namespace {
bool refuse(client_core& core, completion& done) {
  if (core.config_error || core.stopped) {
    core.complete_later(done, core.config_error ? core.config_error : make_error_code(errc::shutting_down));
    return true;
  }
  return false;
}
}  // namespace

op_ref start_connect(client_core& core, completion& done) {
  if (refuse(core, done)) return {};
  query_op* op = core.pools.of<query_op>().take(core);
  op->start_ping(done);
  return {};
}

op_ref start_acquire(client_core& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                     std::int64_t wait_ms, std::int64_t lease_ms, completion& done) {
  if (refuse(core, done)) return {};
  if (!valid_lease_ms(lease_ms)) {  // checked before anything is written (lua/include/lease_guard.lua)
    core.complete_later(done, errc::invalid_argument);
    return {};
  }
  acquire_op* op = core.pools.of<acquire_op>().take(core);
  const op_ref ref = op->ref();
  op->start(names, owner, wait_ms, lease_ms, done);
  return ref;
}

op_ref start_unlock(client_core& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                    completion& done) {
  if (refuse(core, done)) return {};
  core.pools.of<unlock_op>().take(core)->start(names, owner, &done);
  return {};
}

op_ref start_query(client_core& core, const std::shared_ptr<const lock_names>& names, lock_query q,
                   std::int64_t owner, completion& done, std::int64_t lease_ms) {
  if (refuse(core, done)) return {};
  if (q == lock_query::lease_lost) {
    const std::uint32_t held = core.holds.find(names->name, owner, protocol_of(names->kind).field());
    core.complete_later(done, {}, held != hold_table::none && core.holds[held].lost ? 1 : 0);
    return {};
  }
  core.pools.of<query_op>().take(core)->start(names, q, owner, done, lease_ms);
  return {};
}

}  // namespace deadbolt::detail
