// The one operation behind the semaphores and the count-down latch: send a call, read its verdict,
// and for the waiting calls (semaphore acquire, permit acquire, latch await) park on the object's
// channel and try again. Each kind's file (semaphore.cpp, expirable_semaphore.cpp,
// count_down_latch.cpp) says what its calls send and what their replies mean (a sync_spec); this
// file owns what they share:
//   waiting   park on the channel (wake policy per call) for at most what the verdict says, never
//             longer than recheck_ms (the keys have no TTL to bound a wait: a lost message costs at
//             most that) nor past the deadline; every wake-up is only a hint: the call runs again.
//   ambiguity a call whose reply was lost is re-sent only if it is a read (idempotent); a call with
//             a verify step (permit acquire: ZRANK of its id) asks instead; any other reports
//             errc::outcome_unknown and is never re-run.
//   outage    a waiter whose call could not even be sent (not_connected) tries again until its deadline.
//   cancel    a parked waiter is woken with operation_aborted; one whose call is in flight finishes
//             when the reply comes, giving back what it took (the spec's undo).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>

#include "deadbolt/detail/sync_engine.hpp"
#include "detail/client_core.hpp"
#include "detail/script_call.hpp"

namespace deadbolt::detail {

class sync_op;

/// What a reply means.
struct verdict {
  enum class kind { done, busy, retry, fail } what = kind::done;
  std::int64_t value = 0;     ///< done: the result (waiting calls: non-zero = acquired / reached zero)
  std::int64_t wait_ms = -1;  ///< busy: park at most this long (-1: recheck_ms)
  std::error_code ec;         ///< fail

  static verdict done(std::int64_t v) { return {kind::done, v, -1, {}}; }
  static verdict busy(std::int64_t wait_ms = -1) { return {kind::busy, 0, wait_ms, {}}; }
  static verdict retry() { return {kind::retry, 0, -1, {}}; }
  static verdict fail(std::error_code ec) { return {kind::fail, 0, -1, ec}; }
};

/// One call: how it is sent and what its reply means.
struct sync_spec {
  using encode_fn = void (*)(sync_op& op, resp::encoder& e);
  using judge_fn = verdict (*)(sync_op& op);
  using shortcut_fn = bool (*)(const sync_args& args, verdict& out);

  constexpr sync_spec(encode_fn encode, judge_fn judge, shortcut_fn shortcut = nullptr, bool script = true,
                      bool idempotent = false, wake_policy policy = wake_policy::count,
                      const sync_spec* verify = nullptr, const sync_spec* undo = nullptr)
      : encode(encode), judge(judge), shortcut(shortcut), script(script), idempotent(idempotent),
        policy(policy), verify(verify), undo(undo) {}

  encode_fn encode;
  /// Reads op.reply (nil or an integer; errors and other shapes never get here).
  judge_fn judge;
  /// Answers without sending anything (argument checks, trivial cases); true if it did.
  shortcut_fn shortcut;
  bool script;        ///< encode writes EVALSHA (NOSCRIPT handling)
  bool idempotent;    ///< a read: may be sent again after an ambiguous failure
  wake_policy policy; ///< waiting calls: how many waiters one message wakes
  const sync_spec* verify;  ///< after an ambiguous failure: asks whether it ran
  const sync_spec* undo;    ///< acquired but cancelled: gives it back (nobody waits for it)
};

/// The specs of each kind's calls, or null (src/sync/<kind>.cpp).
const sync_spec* semaphore_spec(sync_call call);
const sync_spec* expirable_spec(sync_call call);
const sync_spec* latch_spec(sync_call call);

class sync_op final : public request, public waiter, public operation {
 public:
  /// A wait with nothing to bound it re-checks this often.
  static constexpr std::int64_t recheck_ms = 5'000;

  /// A server loading its dataset or running a script (LOADING, BUSY) is asked again this often.
  static constexpr std::int64_t busy_retry_ms = 250;

  explicit sync_op(client_core& core) : core(core), timer_(core.executor) {}

  /// Exactly one of done / done_id is non-null, or neither (an undo nobody waits for).
  void start(const std::shared_ptr<const sync_names>& names, const sync_spec& spec, const sync_args& args,
             completion* done, basic_completion<std::optional<permit_id>>* done_id);
  void cancel() override;

  // What the specs read.
  client_core& core;
  std::shared_ptr<const sync_names> names;
  sync_args args;
  scalar_reply reply;
  std::int64_t now_ms = 0;  ///< the client's wall clock when the current call was sent

 private:
  enum class phase { idle, call, verify, parked, paused };

  void send(const sync_spec& spec, phase p);
  void encode(resp::encoder& e) override { current_->encode(*this, e); }
  void on_node(const resp::node& n) override { reply.take(n); }
  void on_done(std::error_code ec) override;
  void on_wake(wake_reason why) override;
  void judged(const verdict& v);
  void park(std::int64_t wait_ms);
  void retry_later();
  bool before_deadline() const;
  void finish(std::error_code ec, std::int64_t value);

  const sync_spec* spec_ = nullptr;
  const sync_spec* current_ = nullptr;
  completion* done_ = nullptr;
  basic_completion<std::optional<permit_id>>* done_id_ = nullptr;
  phase phase_ = phase::idle;
  std::int64_t deadline_ns_ = -1;
  bool cancelled_ = false;
  bool waited_ = false;
  std::uint64_t seen_messages_ = 0;
  asio::steady_timer timer_;  // the pause after LOADING / BUSY
  const sync_spec* resume_spec_ = nullptr;
  phase resume_phase_ = phase::call;
};

}  // namespace deadbolt::detail
