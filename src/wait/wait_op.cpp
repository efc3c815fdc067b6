#include "wait/wait_op.hpp"

#include <chrono>

#include "base/outcome.hpp"
#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {

void wait_op_base::begin(wait_attempt& a, const wait_setup& s) {
  attempt_ = &a;
  parks_ = s.rules.parks;
  // Replica sync: the kind says whether its attempt syncs (how to undo it, how to confirm a found
  // hold); the config says whether syncing is on, and how often and after what pause an unsynced
  // attempt is tried again. The driver says which steps WAIT.
  const op_settings& settings = core.settings();
  wait_rules rules = s.rules;
  acquiring_ = s.rules.syncs_replicas;  // what the kind says, whatever the config says of syncing
  rules.syncs_replicas = rules.syncs_replicas && settings.syncs_replicas;
  rules.sync_retries = settings.sync_retries;
  rules.sync_retry_delay_ms = settings.sync_retry_delay_ms;
  channel_ = s.channel;
  wake_ = s.wake;
  bool queue_first = false;
  std::uint64_t seen = 0;
  if (s.queue_first) {
    subscriber* subs = core.existing_subscriptions(channel_);
    if (subs && subs->has_contenders(channel_)) {
      // Others of this client already wait for it: queue behind them rather than barge in (the next
      // message wakes them in order; the one woken tries).
      queue_first = true;
      seen = subs->messages_on(channel_);
    }
  }
  run(driver_.start(moment(), rules, s.wait_ms, s.prepare, queue_first, seen));
}

wait_moment wait_op_base::moment() const { return {port::monotonic_ns(), core.shutting_down(), core.closed()}; }

void wait_op_base::run(const wait_action& a) {
  switch (a.what) {
    case wait_action::kind::send: return send(a.step, a.sync);
    case wait_action::kind::park: return park(a);
    case wait_action::kind::sleep: return sleep(a.wait_ns);
    case wait_action::kind::finish: return finish(a);
    case wait_action::kind::none: return;
  }
}

void wait_op_base::send(const wait_step& s, bool sync) {
  // The undo needs no WAIT: a replica that later gets the attempt's write gets the undo's after it.
  syncs_replicas = sync;
  acquires = s.role == step_role::attempt && acquiring_;
  attempt_->sending(s);
  if (s.role == step_role::attempt) {
    subscriber* subs = parks_ ? core.existing_subscriptions(channel_) : nullptr;
    driver_.attempt_sent(subs ? subs->messages_on(channel_) : 0);
  }
  core.submit(*this);
}

void wait_op_base::park(const wait_action& a) {
  const std::error_code ec =
      core.subscriptions(channel_).wait(*this, channel_, wake_, std::chrono::nanoseconds(a.wait_ns), a.seen);
  if (ec) run(driver_.park_failed(moment(), ec));
}

void wait_op_base::sleep(std::int64_t wait_ns) {
  timer_.expires_after(std::chrono::nanoseconds(wait_ns));
  // The core owns this op (its pool): keep the core alive until the handler has run.
  timer_.async_wait([this, self = core.lifeline()](std::error_code ec) {
    run(driver_.timer_fired(moment(), static_cast<bool>(ec)));
  });
}

void wait_op_base::on_done(std::error_code ec) {
  if (ec) return run(driver_.failed(moment(), {ec, ambiguous(ec), transient(ec)}));
  run(driver_.replied(moment(), attempt_->read(driver_.current()), replicas_unsynced()));
}

void wait_op_base::on_wake(wake_reason why) {
  switch (why) {
    case wake_reason::shutdown: return run(driver_.woken(moment(), wait_driver::wake::shutdown));
    case wake_reason::cancelled: return run(driver_.woken(moment(), wait_driver::wake::cancelled));
    default: return run(driver_.woken(moment(), wait_driver::wake::hint));
  }
}

void wait_op_base::cancel() {
  switch (driver_.cancel()) {
    case wait_driver::cancel_effect::unpark: core.subscriptions(channel_).cancel(*this); break;
    case wait_driver::cancel_effect::stop_timer: timer_.cancel(); break;  // its handler ends the wait
    case wait_driver::cancel_effect::none: break;
  }
}

void wait_op_base::finish(const wait_action& a) {
  if (contending) {  // stops contending on the channel (after the last wake-up, never while parked)
    if (subscriber* subs = core.existing_subscriptions(channel_)) subs->withdraw(*this);
  }
  ++generation;
  wait_attempt* attempt = attempt_;
  attempt_ = nullptr;
  attempt->conclude(a, a.aborted ? make_error_code(asio::error::operation_aborted) : a.ec, *this);
}

}  // namespace deadbolt::detail
