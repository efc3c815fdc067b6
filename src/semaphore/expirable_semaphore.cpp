// The permit-expirable semaphore (Redisson RPermitExpirableSemaphore, docs/protocol.md §9), in one place:
//   keys      the bare name (STRING: available permits), {name}:timeout (ZSET: member = the permit
//             id's 16 raw bytes, score = expiry in client wall-clock ms, or NONEXP 922337203685477),
//             channel redisson_sc:{name} (message: the new available count; add publishes the
//             change, only when positive)
//   scripts   lua/permit_acquire.lua (reclaims expired permits first), permit_release.lua,
//             permit_update_lease.lua, permit_available.lua, permit_add.lua (add, sent through the
//             semaphore's spec); try_set is the semaphore's
//   waiting   try; if none is free the script returns the earliest expiry among the held permits:
//             park on the channel (wake_policy::count) until then (at most the recheck interval),
//             and try again: the expired permit is reclaimed by that attempt.
//   ambiguity an acquire whose reply was lost is checked with ZRANK of its id (its id is chosen
//             before sending): held = acquired, absent = try again. Release and lease updates are
//             not re-run: errc::outcome_unknown. A cancelled acquire that got its permit releases it.
#include <algorithm>

#include "base/keys.hpp"
#include "deadbolt/error.hpp"
#include "scripts.hpp"
#include "semaphore/counter_spec.hpp"

namespace deadbolt::detail {
namespace {

bool negative_lease(const counter_args& a, wait_outcome& out) {
  if (a.lease_ms >= 0) return false;
  out = wait_outcome::failed(errc::invalid_argument);
  return true;
}

std::int64_t expiry(const counter_attempt& op) { return op.args.lease_ms > 0 ? op.now_ms + op.args.lease_ms : never_expires; }

void encode_release(counter_attempt& op, resp::encoder& e) {
  begin_script(e, op.req, scripts::permit_release, 3, 4);
  e.bulk(op.names->name).bulk(op.names->channel).bulk(op.names->timeouts);
  e.bulk(op.args.id.raw()).bulk("1").bulk(op.now_ms).bulk(op.core.settings().publish);
}

const counter_spec permit_try_release_spec{encode_release, value_or_zero};

const counter_spec permit_release_spec{
    encode_release, [](const counter_reading& op) {
      return op.reply.what == scalar_reply::kind::integer && op.reply.value == 1
                 ? wait_outcome::done(1)
                 : wait_outcome::failed(errc::no_such_permit);
    }};

// After a lost acquire reply: is our id in the ZSET?
const counter_spec permit_verify_spec{
    [](counter_attempt& op, resp::encoder& e) { e.command("ZRANK", op.names->timeouts, op.args.id.raw()); },
    [](const counter_reading& op) { return op.reply.what == scalar_reply::kind::nil ? wait_outcome::retry() : wait_outcome::acquired(1); },
    nullptr, true};

const counter_spec permit_acquire_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::permit_acquire, 3, 6);
      e.bulk(op.names->name).bulk(op.names->timeouts).bulk(op.names->channel);
      e.bulk("1").bulk(expiry(op)).bulk(op.now_ms).bulk(never_expires).bulk(op.core.settings().publish);
      e.bulk(op.args.id.raw());
    },
    [](const counter_reading& op) {
      if (op.reply.what == scalar_reply::kind::nil) return wait_outcome::busy();
      if (op.reply.value == -1) return wait_outcome::acquired(1);
      // The earliest expiry: try again just after it (the script reclaims scores <= now).
      return wait_outcome::busy(std::max<std::int64_t>(op.reply.value - op.now_ms + 1, 1));
    },
    negative_lease, false, wake_policy::count, &permit_verify_spec, &permit_try_release_spec};

const counter_spec permit_update_lease_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::permit_update_lease, 2, 3);
      e.bulk(op.names->name).bulk(op.names->timeouts);
      e.bulk(op.args.id.raw()).bulk(expiry(op)).bulk(op.now_ms);
    },
    value_or_zero, negative_lease};

const counter_spec permit_available_spec{
    [](counter_attempt& op, resp::encoder& e) {
      begin_script(e, op.req, scripts::permit_available, 3, 2);
      e.bulk(op.names->name).bulk(op.names->timeouts).bulk(op.names->channel);
      e.bulk(op.now_ms).bulk(op.core.settings().publish);
    },
    value_or_zero};

}  // namespace

const counter_spec* expirable_spec(counter_call call) {
  switch (call) {
    case counter_call::permit_acquire: return &permit_acquire_spec;
    case counter_call::permit_release: return &permit_release_spec;
    case counter_call::permit_try_release: return &permit_try_release_spec;
    case counter_call::permit_update_lease: return &permit_update_lease_spec;
    case counter_call::permit_available: return &permit_available_spec;
    default: return nullptr;
  }
}

}  // namespace deadbolt::detail
