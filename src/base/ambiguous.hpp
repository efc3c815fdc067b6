// Whether a failed request may have run: the one question a retry decision asks of an error code.
// Kept apart from base/outcome.hpp (which needs Asio) so that decision cores without I/O can ask it.
#pragma once

#include <system_error>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/error.hpp"

namespace deadbolt::detail {

/// Sent, but no reply came: it may or may not have run.
inline bool ambiguous(std::error_code ec) {
  return ec == errc::outcome_unknown || ec == errc::timed_out || &ec.category() == &resp::resp_category();
}

}  // namespace deadbolt::detail
