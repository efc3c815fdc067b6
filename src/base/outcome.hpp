// What a failed request's error code says about its outcome, for the operations that decide whether
// they may send a request again (never a non-idempotent script whose outcome is unknown).
#pragma once

#include <system_error>

#include "deadbolt/error.hpp"
#include "deadbolt/port/asio.hpp"
#include "deadbolt/resp/error.hpp"

namespace deadbolt::detail {

/// Sent, but no reply came: it may or may not have run.
inline bool ambiguous(std::error_code ec) {
  return ec == errc::outcome_unknown || ec == errc::timed_out || &ec.category() == &resp::resp_category();
}

/// A connection problem rather than an answer: the same request can be made again once the
/// connection is back. (Server errors, shutdown, cancellation and full tables are answers.)
inline bool transient(std::error_code ec) {
  if (ambiguous(ec) || ec == errc::not_connected) return true;
  return &ec.category() != &deadbolt_category() && ec != asio::error::operation_aborted;
}

}  // namespace deadbolt::detail
