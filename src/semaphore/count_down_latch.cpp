// The count-down latch (Redisson RCountDownLatch, docs/protocol.md §10), in one place:
//   keys      the bare name (STRING: the count; deleted at zero), channel
//             redisson_countdownlatch__channel__{name} (braces always added; message "0" = reached
//             zero, "1" = a new count was set or the latch deleted)
//   scripts   lua/latch_try_set.lua, latch_count_down.lua, latch_delete.lua; count = GET
//   waiting   await reads the count (GET); while it is above zero it parks on the channel with
//             wake_policy::all (every message wakes every local awaiter to re-read), at most
//             the recheck interval, and reads again. Await is a read: it is simply re-sent after a
//             lost reply or an outage, until its deadline.
//   ambiguity count down and try_set are not re-run after a lost reply: errc::outcome_unknown.
#include "deadbolt/error.hpp"
#include "scripts.hpp"
#include "semaphore/counter_spec.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view zero_message = "0";
constexpr std::string_view new_count_message = "1";

void encode_get(counter_attempt& op, resp::encoder& e) { e.command("GET", op.names->name); }

const counter_spec latch_try_set_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::latch_try_set, 2, 3);
      e.bulk(op.names->name).bulk(op.names->channel);
      e.bulk(new_count_message).bulk(op.args.n).bulk(op.core.settings().publish);
    },
    value_or_zero,
    [](const counter_args& a, wait_outcome& out) {
      if (a.n >= 0) return false;
      out = wait_outcome::failed(errc::invalid_argument);
      return true;
    }};

const counter_spec latch_count_down_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::latch_count_down, 2, 2);
      e.bulk(op.names->name).bulk(op.names->channel).bulk(zero_message).bulk(op.core.settings().publish);
    },
    value_or_zero};

const counter_spec latch_delete_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::latch_delete, 2, 2);
      e.bulk(op.names->name).bulk(op.names->channel).bulk(new_count_message).bulk(op.core.settings().publish);
    },
    value_or_zero};

const counter_spec latch_count_spec{encode_get, value_or_zero, nullptr, true};

const counter_spec latch_await_spec{
    encode_get,
    [](const counter_reading& op) {
      return op.reply.what == scalar_reply::kind::integer && op.reply.value > 0 ? wait_outcome::busy() : wait_outcome::done(1);
    },
    nullptr, true, wake_policy::all};

}  // namespace

const counter_spec* latch_spec(counter_call call) {
  switch (call) {
    case counter_call::latch_try_set: return &latch_try_set_spec;
    case counter_call::latch_count_down: return &latch_count_down_spec;
    case counter_call::latch_count: return &latch_count_spec;
    case counter_call::latch_await: return &latch_await_spec;
    case counter_call::latch_delete: return &latch_delete_spec;
    default: return nullptr;
  }
}

}  // namespace deadbolt::detail
