// The semaphore (Redisson RSemaphore, docs/protocol.md §8), in one place:
//   keys      the bare name (STRING: available permits; missing = 0), channel redisson_sc:{name}
//             (message: the new available count)
//   scripts   lua/semaphore_try_acquire.lua, semaphore_release.lua, semaphore_try_set.lua,
//             semaphore_add.lua, semaphore_drain.lua; available = GET
//   waiting   try; if short of permits, park on the channel with wake_policy::count (a release of
//             count c wakes up to c local waiters), at most the recheck interval, and try again.
//   ambiguity an acquire or release whose reply was lost cannot be checked (permits have no owner):
//             errc::outcome_unknown, never re-run. A cancelled acquire that took its permits gives
//             them back.
// The expirable semaphore (expirable_semaphore.cpp) shares the channel, try_set and add.
#include "deadbolt/error.hpp"
#include "scripts.hpp"
#include "semaphore/counter_spec.hpp"

namespace deadbolt::detail {
namespace {

bool negative_n(const counter_args& a, wait_outcome& out) {
  if (a.n >= 0) return false;
  out = wait_outcome::failed(errc::invalid_argument);
  return true;
}

// Zero permits: Redisson answers without a request.
bool zero_or_negative_n(const counter_args& a, wait_outcome& out) {
  if (negative_n(a, out)) return true;
  if (a.n != 0) return false;
  out = wait_outcome::done(1);
  return true;
}

void encode_with_channel(counter_attempt& op, resp::encoder& e, const script& s) {
  begin_script(e, op.req, s, 2, 2);
  e.bulk(op.names->name).bulk(op.names->channel).bulk(op.args.n).bulk(op.core.settings().publish);
}

const counter_spec semaphore_release_spec{
    [](counter_attempt& op, resp::encoder& e) { encode_with_channel(op, e, scripts::semaphore_release); },
    value_or_zero, zero_or_negative_n};

const counter_spec semaphore_acquire_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::semaphore_try_acquire, 1, 1);
      e.bulk(op.names->name).bulk(op.args.n);
    },
    [](const counter_reading& op) {
      return op.reply.what == scalar_reply::kind::integer && op.reply.value == 1 ? wait_outcome::acquired(1) : wait_outcome::busy();
    },
    zero_or_negative_n, false, wake_policy::count, nullptr, &semaphore_release_spec};

const counter_spec semaphore_try_set_spec{
    [](counter_attempt& op, resp::encoder& e) { encode_with_channel(op, e, scripts::semaphore_try_set); },
    value_or_zero, negative_n};

// The permit-expirable semaphore publishes its change differently (lua/permit_add.lua).
const counter_spec semaphore_add_spec{
    [](counter_attempt& op, resp::encoder& e) {
      encode_with_channel(op, e, op.names->kind == counter_kind::expirable ? scripts::permit_add : scripts::semaphore_add);
    },
    value_or_zero};

const counter_spec semaphore_drain_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::semaphore_drain, 1, 0);
      e.bulk(op.names->name);
    },
    value_or_zero};

const counter_spec semaphore_available_spec{
    [](counter_attempt& op, resp::encoder& e) { e.command("GET", op.names->name); }, value_or_zero, nullptr,
    true};

}  // namespace

const counter_spec* semaphore_spec(counter_call call) {
  switch (call) {
    case counter_call::sem_acquire: return &semaphore_acquire_spec;
    case counter_call::sem_release: return &semaphore_release_spec;
    case counter_call::sem_try_set: return &semaphore_try_set_spec;
    case counter_call::sem_add: return &semaphore_add_spec;
    case counter_call::sem_drain: return &semaphore_drain_spec;
    case counter_call::sem_available: return &semaphore_available_spec;
    default: return nullptr;
  }
}

}  // namespace deadbolt::detail
