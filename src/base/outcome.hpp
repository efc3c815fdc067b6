// What a failed request's error code says about its outcome, for the operations that decide whether
// they may send a request again (never a non-idempotent script whose outcome is unknown).
#pragma once

#include <system_error>

#include "base/ambiguous.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/asio_core.hpp"

namespace deadbolt::detail {

/// A connection problem rather than an answer: the same request can be made again once the
/// connection is back. (Server errors, shutdown, cancellation and full tables are answers.)
inline bool transient(std::error_code ec) {
  if (ambiguous(ec) || ec == errc::not_connected) return true;
  return &ec.category() != &deadbolt_category() && ec != asio::error::operation_aborted;
}

}  // namespace deadbolt::detail
