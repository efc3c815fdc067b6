// The counters' calls (the semaphores and the count-down latch: the kinds that count) as specs:
// each kind's file (semaphore.cpp, expirable_semaphore.cpp, count_down_latch.cpp) says what its
// calls send and what their replies mean; src/semaphore/counter_attempt.cpp runs a call through the
// wait driver (src/wait/wait_driver.hpp), which owns what the waiting calls share:
//   waiting   park on the channel (wake policy per call) for at most what the reply says, never
//             longer than the recheck interval (wait_rules::recheck_ms: the keys have no TTL to bound
//             a wait, a lost message costs at most that) nor past the deadline; every wake-up is only
//             a hint.
//   ambiguity a call whose reply was lost is re-sent only if it is a read (idempotent); a call with
//             a verify step (permit acquire: ZRANK of its id) asks instead; any other reports
//             errc::outcome_unknown and is never re-run.
//   outage    a waiter whose call could not even be sent (not_connected) tries again until its deadline.
//   cancel    a parked waiter ends with operation_aborted; one whose call is in flight finishes when
//             the reply comes, giving back what it took (the spec's undo).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <system_error>

#include "deadbolt/detail/counter_engine.hpp"
#include "engine/op_context.hpp"
#include "pipeline/script_call.hpp"
#include "wait/wait_op.hpp"

namespace deadbolt::detail {

class counter_attempt;

/// What a spec reads a reply with (the reply is nil or an integer: errors and other shapes never get
/// to the spec).
struct counter_reading {
  const scalar_reply& reply;
  const counter_args& args;
  std::int64_t now_ms;  ///< the client's wall clock when the call was sent
};

/// One call: how it is sent and what its reply means.
struct counter_spec {
  using encode_fn = void (*)(counter_attempt& call, resp::encoder& e);
  using judge_fn = wait_outcome (*)(const counter_reading& r);
  using shortcut_fn = bool (*)(const counter_args& args, wait_outcome& out);

  constexpr counter_spec(encode_fn encode, judge_fn judge, shortcut_fn shortcut = nullptr, bool idempotent = false,
                      wake_policy policy = wake_policy::count, const counter_spec* verify = nullptr,
                      const counter_spec* undo = nullptr)
      : encode(encode), judge(judge), shortcut(shortcut), idempotent(idempotent), policy(policy), verify(verify),
        undo(undo) {}

  encode_fn encode;
  /// acquired (what undo gives back), done, busy, retry (a verify: it did not run) or failed.
  judge_fn judge;
  /// Answers without sending anything (argument checks, trivial cases); true if it did.
  shortcut_fn shortcut;
  bool idempotent;    ///< a read: may be sent again after an ambiguous failure
  wake_policy policy; ///< waiting calls: how many waiters one message wakes
  const counter_spec* verify;  ///< after an ambiguous failure: asks whether it ran
  const counter_spec* undo;    ///< acquired but cancelled: gives it back (nobody waits for it)
};

/// A judge shared by the kinds: done with the reply's integer, or 0 when it is nil (a count read, a
/// release's answer).
wait_outcome value_or_zero(const counter_reading& r);

/// The specs of each kind's calls, or null (src/semaphore/<kind>.cpp).
const counter_spec* semaphore_spec(counter_call call);
const counter_spec* expirable_spec(counter_call call);
const counter_spec* latch_spec(counter_call call);

/// One call in flight (inside a wait_op<counter_attempt>), as its spec's encode sees it.
class counter_attempt final : public wait_attempt {
 public:
  explicit counter_attempt(wait_op_base& op) : core(op.core), req(op), op_(op) {}

  /// Exactly one of done / done_id is non-null, or neither (an undo nobody waits for).
  void start(const std::shared_ptr<const counter_names>& names, const counter_spec& spec, const counter_args& args,
             completion* done, basic_completion<std::optional<permit_id>>* done_id);
  /// Runs `undo` (gives back what a cancelled call took), then completes done / done_id with
  /// `report` and nothing taken, whatever the undo answered.
  void start_undo(const std::shared_ptr<const counter_names>& names, const counter_spec& undo, const counter_args& args,
                  completion* done, basic_completion<std::optional<permit_id>>* done_id, std::error_code report);

  op_context& core;
  request& req;  ///< for begin_script()
  std::shared_ptr<const counter_names> names;
  counter_args args;
  std::int64_t now_ms = 0;  ///< the client's wall clock when the current call was sent

 private:
  void sending(const wait_step& s) override;
  void encode(const wait_step&, resp::encoder& e, request&) override { current_->encode(*this, e); }
  void on_node(const wait_step&, const resp::node& n) override { reply_.take(n); }
  wait_outcome read(const wait_step& s) override;
  void conclude(const wait_action& end, std::error_code ec, wait_op_base& op) override;

  wait_op_base& op_;
  const counter_spec* spec_ = nullptr;
  const counter_spec* current_ = nullptr;
  scalar_reply reply_;
  completion* done_ = nullptr;
  basic_completion<std::optional<permit_id>>* done_id_ = nullptr;
  bool undo_ = false;           // the callers hear report_, not the undo's outcome
  std::error_code report_;
};

}  // namespace deadbolt::detail
