// The configuration's checks, one list for both of its answers: config::validate() (an error code, on
// every client's construction) and config::why_invalid() (the field and the reason, in words).
#pragma once

#include <string>
#include <system_error>

#include "deadbolt/config.hpp"

namespace deadbolt::detail {

/// The first problem found: the field, and the reason as a fixed text, or (TLS) in `detail`.
struct config_problem {
  const char* field = nullptr;
  const char* reason = nullptr;
  std::string detail;
};

/// Checks `c` and parses its URL into `ep`, as config::validate() documents; fills `problem` (when
/// given) with what is wrong.
std::error_code check_config(const config& c, endpoint& ep, config_problem* problem);

}  // namespace deadbolt::detail
