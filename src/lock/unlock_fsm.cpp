#include "lock/unlock_fsm.hpp"

#include "base/ambiguous.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

using change = unlock_action::hold_change;

namespace {

unlock_action next(unlock_action::kind what) {
  unlock_action a;
  a.what = what;
  return a;
}

}  // namespace

void unlock_fsm::start(const unlock_limits& limits) {
  limits_ = limits;
  attempts_ = 1;
  sync_resends_ = 0;
  unsynced_ = false;
  surplus_ = 0;
  outcome_ = {};
}

unlock_action unlock_fsm::finish(std::error_code ec, std::int64_t value, change what, bool delete_latch) const {
  unlock_action a;
  a.what = unlock_action::kind::finish;
  a.change = what;
  a.delete_latch = delete_latch;
  a.ec = ec;
  a.value = value;
  return a;
}

unlock_action unlock_fsm::on_failure(std::error_code ec, bool closed) {
  // Same request id: if the first attempt ran, the latch answers for it.
  if (ambiguous(ec) && attempts_ < limits_.attempts && !closed) {
    ++attempts_;
    return next(unlock_action::kind::send_again);
  }
  // Unknown or failed: either way the hold leaves the watchdog and ends with its lease. Surplus
  // releases already done are reported as the caller's own release was.
  if (surplus_ > 0) return finish(outcome_, 1, change::stop_renewing);
  return finish(ec, 0, change::stop_renewing);
}

unlock_action unlock_fsm::on_reply(unlock_reply reply, std::error_code server_error, bool replicas_unsynced,
                                   const unlock_hold& hold, bool closed) {
  if (replicas_unsynced && reply != unlock_reply::server_error) {
    // The release is on the master only. Sent again with the same latch, it answers as before and
    // its WAIT asks once more; when the tries are spent the caller hears it (the release stands).
    if (sync_resends_ < limits_.sync_retries && !closed) {
      ++sync_resends_;
      return next(unlock_action::kind::send_again);
    }
    unsynced_ = true;
  }
  switch (reply) {
    case unlock_reply::gone: {
      const change what = hold.known ? change::forget : change::none;
      if (surplus_ > 0) return finish(outcome_, 1, what);  // gone meanwhile: nothing left to release
      const bool lost = hold.known && hold.lost;
      return finish(lost ? make_error_code(errc::lease_lost) : make_error_code(errc::not_owner), 0, what);
    }
    case unlock_reply::released: {
      const change what = hold.known ? change::released : change::none;
      // A hold the owner was told it lost is reported lost, whatever the server still had.
      if (surplus_ > 0) return finish(outcome_, 1, what, true);
      return finish(hold.known && hold.lost ? make_error_code(errc::lease_lost) : std::error_code(), 1, what, true);
    }
    case unlock_reply::still_held: return still_held(hold);
    case unlock_reply::server_error: return finish(server_error, 0, change::none);
    case unlock_reply::unexpected: break;
  }
  return finish(errc::protocol_error, 0, change::none);
}

// Still held: by us (reentrant), or by other readers after our last read hold.
unlock_action unlock_fsm::still_held(const unlock_hold& hold) {
  if (surplus_ == 0) {
    if (!hold.known) return finish({}, 0, change::none);  // not ours to judge
    if (!hold.lost && hold.count > 1) return finish({}, 0, change::one_less);
    if (hold.read) return finish(hold.lost ? make_error_code(errc::lease_lost) : std::error_code(), 0, change::released);
    // The caller's last hold (or one it was told it lost), yet the server counts more: holds from an
    // acquire whose outcome was unknown, or a lease declared lost that was not. Release those too,
    // each with its own latch, or the lock would outlive its holder.
    outcome_ = hold.lost ? make_error_code(errc::lease_lost) : std::error_code();
  }
  if (++surplus_ > limits_.max_surplus) return finish(outcome_, 1, change::stop_renewing);
  attempts_ = 1;
  return next(unlock_action::kind::release_surplus);
}

std::error_code unlock_fsm::final_error(std::error_code ec) const {
  if (!ec && unsynced_) return errc::replicas_not_synced;
  return ec;
}

}  // namespace deadbolt::detail
