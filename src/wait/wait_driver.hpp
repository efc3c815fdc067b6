// The decisions of every wait (a lock's acquire, a semaphore's acquire, a latch's await), without I/O:
// no Asio, no clock, no server. The operation that runs a wait (src/engine/wait_op.*) feeds it what
// happened (a reply read by the kind's spec, a failed request, a wake-up, a timer) with the time, and
// carries out the action it answers: send a step, park on the channel, sleep, or finish. It owns:
//   deadline   the caller's wait; a wait that finds the object busy past it ends "not acquired".
//   parking    until a message, or min(what the attempt said, the spec's recheck bound, the time
//              left); the channel's message count when the attempt was sent goes with the park, so a
//              message that came while the attempt was in flight wakes the waiter at once.
//   ambiguity  an attempt whose reply was lost is never sent again: its verify step asks whether it
//              ran (or the outcome is reported unknown); a check that cannot be made leaves it unknown.
//   sync       replica sync: which steps are followed by WAIT (the attempt, and the confirm step that
//              writes a hold a check found again), and what their answer means. What a wait took
//              counts only once a WAIT after a write of it was acknowledged (or none was needed),
//              whether the attempt took it or a check found it: else it is given back (the undo step)
//              and tried again after a pause, until the tries are spent.
//   outages    a waiter (once it has waited, or at once for a step that is safe to repeat) sends its
//              step again until its deadline; a step never sent for want of a connection
//              (not_connected) is sent again once before the wait has waited; LOADING / BUSY replies
//              are asked again after a pause.
//   cancel     a parked or sleeping wait ends at once; one with a request in flight ends when the reply
//              comes, and gives back what that reply took (finish with give_back).
//   leaving    an attempt that may have left a trace (a fair lock's queue entry) is undone by the
//              spec's leave step before a wait ends without the prize.
#pragma once

#include <cstdint>
#include <system_error>

namespace deadbolt::detail {

/// What a step is for; the driver treats steps by their role, the spec knows what they send.
enum class step_role : std::uint8_t {
  prepare,  ///< a read the attempt needs first (the lock's baseline hold count)
  attempt,  ///< the try itself
  check,    ///< resolves an attempt whose reply was lost (verify and what follows it)
  leave,    ///< removes the trace a waiter left; its answer only ends the wait
  undo,     ///< gives back what an unsynced attempt took (replica sync); then a pause and a new try
};

struct wait_step {
  step_role role = step_role::attempt;
  std::uint8_t id = 0;      ///< the spec's name for it (a role may have several steps)
  bool idempotent = false;  ///< may be sent again after a lost reply or an outage, even before waiting

  friend bool operator==(const wait_step& a, const wait_step& b) {
    return a.role == b.role && a.id == b.id && a.idempotent == b.idempotent;
  }
};

/// What a reply meant, as the kind's spec reads it.
struct wait_outcome {
  enum class kind : std::uint8_t {
    acquired,  ///< took something (value: what the caller gets); a cancelled wait gives it back
    done,      ///< an answer that ends the call as it is (value)
    busy,      ///< not now: wait at most wait_ms (< 0: no bound known, 0: try again at once)
    retry,     ///< try again at once, whatever the deadline (a check found the attempt did not run)
    next,      ///< send `step` (prepare → attempt, verify → refresh → token)
    unknown,   ///< the attempt's outcome cannot be known
    failed,    ///< an error (an error reply, or a reply the spec cannot read)
  } what = kind::done;
  std::int64_t value = 0;
  std::int64_t wait_ms = -1;
  wait_step step{};
  std::error_code ec;

  static wait_outcome acquired(std::int64_t v) { return {kind::acquired, v, -1, {}, {}}; }
  static wait_outcome done(std::int64_t v) { return {kind::done, v, -1, {}, {}}; }
  static wait_outcome busy(std::int64_t wait_ms = -1) { return {kind::busy, 0, wait_ms, {}, {}}; }
  static wait_outcome retry() { return {kind::retry, 0, -1, {}, {}}; }
  static wait_outcome next(wait_step s) { return {kind::next, 0, -1, s, {}}; }
  static wait_outcome unknown() { return {kind::unknown, 0, -1, {}, {}}; }
  static wait_outcome failed(std::error_code ec) { return {kind::failed, 0, -1, {}, ec}; }
};

/// How a kind waits (from its spec).
struct wait_rules {
  bool parks = true;              ///< park on the channel; false: sleep on a timer (spin lock)
  bool verifiable = false;        ///< has a verify step for an attempt whose reply was lost
  bool leaves_trace = false;      ///< a busy or unanswered attempt may leave a trace (the leave step)
  /// A park when the attempt gave no bound, and a queued waiter's: a lost message costs at most this.
  std::int64_t recheck_ms = 5'000;
  bool recheck_caps_park = false;   ///< no park is longer than recheck_ms (else the attempt's bound alone)
  std::int64_t busy_retry_ms = 250; ///< LOADING / BUSY: ask again after this pause
  wait_step first{step_role::attempt, 0, false};  ///< the attempt step
  wait_step verify{step_role::check, 0, false};
  wait_step leave{step_role::leave, 0, false};
  wait_step undo{step_role::undo, 0, false};  ///< idempotent: may be sent again after a lost reply
  /// Replica sync: the attempt writes what a failover could lose (a hold, permits): WAIT after it
  /// (when config::replica_sync is not off; the operation applies the config).
  bool syncs_replicas = false;
  /// Replica sync: a check step that writes a hold the verify step found again (a lock's refresh), so
  /// that the WAIT after it confirms the hold on a replica (none: a found hold is given back and tried
  /// again). A read cannot confirm anything: WAIT counts only the connection's own writes, and the
  /// attempt's were on a connection that is gone.
  bool confirms = false;
  wait_step confirm{step_role::check, 0, false};
  /// Replica sync: how often an unsynced attempt is undone and tried again, and the base of the pause
  /// before a new try (each pause is this to twice this, as Redisson's retryDelay). From the config.
  int sync_retries = 0;
  std::int64_t sync_retry_delay_ms = 0;
};

/// The world as the operation sees it when something happens.
struct wait_moment {
  std::int64_t now_ns = 0;  ///< monotonic
  bool stopped = false;     ///< the client is shutting down: no new wait, no give-up of a check
  bool closed = false;      ///< the connections are closed: nothing more can be sent
};

/// What the operation does next.
struct wait_action {
  enum class kind : std::uint8_t {
    send,   ///< send `step` (an attempt: note the channel's message count first, attempt_sent())
    park,   ///< park on the channel for wait_ns, telling the subscriber `seen`
    sleep,  ///< a timer for wait_ns, then timer_fired()
    finish, ///< complete with ec / value (or operation_aborted if `aborted`)
    none,   ///< nothing to do (a stale timer)
  } what = kind::finish;
  wait_step step{};
  bool sync = false;        ///< send: follow the step with WAIT (replica sync), and pass replied() its answer
  std::int64_t wait_ns = 0;
  std::uint64_t seen = 0;
  std::error_code ec;
  std::int64_t value = 0;
  bool acquired = false;   ///< finish: the attempt took it (the kind records it)
  bool give_back = false;  ///< finish: taken, but nobody wants it: the kind gives it back
  bool unknown = false;    ///< finish: the attempt's outcome is unknown (the kind notes that)
  bool aborted = false;    ///< finish: the caller cancelled the wait
};

class wait_driver {
 public:
  /// What cancel() asks the operation to do.
  enum class cancel_effect : std::uint8_t { none, unpark, stop_timer };

  /// Starts a wait of `wait_ms` (< 0: no deadline, 0: a single attempt). `prepare` sends the rules'
  /// prepare step before the first attempt (its reply answers next(attempt)). `queue_first` parks
  /// first (recheck_ms), behind this client's other waiters, with `seen` the channel's message count now.
  wait_action start(const wait_moment& m, const wait_rules& rules, std::int64_t wait_ms,
                    const wait_step* prepare = nullptr, bool queue_first = false, std::uint64_t seen = 0);
  /// The attempt was sent when the channel had received `seen` messages.
  void attempt_sent(std::uint64_t seen) { seen_ = seen; }

  /// `no_replica`: the step was sent with sync, and its WAIT found no replica that acknowledged it.
  wait_action replied(const wait_moment& m, const wait_outcome& o, bool no_replica = false);
  /// The request failed without a reply (what src/base/outcome.hpp says about `ec`).
  struct failure {
    std::error_code ec;
    bool ambiguous = false;  ///< sent, but no reply: it may have run
    bool transient = false;  ///< a connection problem: the same request can be made again
  };
  wait_action failed(const wait_moment& m, const failure& f);
  /// A parked wait was woken: by a message, its timeout or a resubscription (a hint: try again), by
  /// cancel() (unpark), or by shutdown.
  enum class wake : std::uint8_t { hint, cancelled, shutdown };
  wait_action woken(const wait_moment& m, wake why);
  wait_action timer_fired(const wait_moment& m, bool aborted);
  /// The park could not be made (the subscriber's tables are full): the wait ends with `ec`.
  wait_action park_failed(const wait_moment& m, std::error_code ec);
  cancel_effect cancel();

  const wait_step& current() const { return current_; }
  bool cancelled() const { return cancelled_; }
  bool parked() const { return state_ == state::parked; }

 private:
  enum class state : std::uint8_t { idle, sending, parked, sleeping };

  wait_action begin_attempt();
  wait_action send(const wait_step& s);
  wait_action busy(const wait_moment& m, std::int64_t wait_ms);
  wait_action park(const wait_moment& m, std::int64_t wait_ms);
  wait_action sleep(const wait_moment& m, std::int64_t wait_ms, const wait_step& then);
  wait_action not_acquired(const wait_moment& m, std::error_code ec, bool aborted = false);
  wait_action finish(std::error_code ec, std::int64_t value, bool aborted = false);
  wait_action unknown(const wait_moment& m);
  wait_action unsynced(const wait_moment& m);
  wait_action undone(const wait_moment& m);
  wait_action undo_failed(const wait_moment& m, const failure& f);
  std::int64_t sync_pause_ms(const wait_moment& m) const;
  wait_action acquired(const wait_moment& m, std::int64_t value);
  bool syncs(const wait_step& s) const;
  void note_trace();
  bool before_deadline(const wait_moment& m) const { return deadline_ns_ < 0 || m.now_ns < deadline_ns_; }
  std::int64_t bounded(const wait_moment& m, std::int64_t wait_ns) const;
  wait_action sleep_unbounded(std::int64_t wait_ms, const wait_step& then);

  wait_rules rules_;
  state state_ = state::idle;
  wait_step current_{};
  wait_step resume_{};       // what a sleep ends in
  wait_step prepare_{};
  bool prepare_pending_ = false;
  std::int64_t deadline_ns_ = -1;
  bool single_ = false;      // wait_ms == 0: one attempt
  bool cancelled_ = false;
  bool waited_ = false;      // parked or slept at least once
  // A step never sent for want of a connection is sent again before the wait has waited, but once
  // only: a wait without a deadline must not go on for ever when no connection can be made (a
  // cluster whose seeds are all closed ports answers not_connected, with no reason of its own).
  static constexpr int max_unsent_resends = 1;
  int unsent_resends_ = 0;
  bool trace_ = false;       // an attempt may have left a trace to remove
  std::error_code outcome_;  // what to report once the leave step is answered
  bool outcome_aborted_ = false;
  bool unknown_ = false;     // the attempt's outcome could not be learnt
  std::uint64_t seen_ = 0;
  bool confirmed_ = true;     // what the current attempt took is on a replica (or needs no sync)
  int unsynced_ = 0;          // attempts no replica acknowledged
  int undo_resends_ = 0;      // the current undo sent again after a lost reply
  bool retry_after_undo_ = false;
};

}  // namespace deadbolt::detail
