// Reading what a name is, for status and list: the library's inspect(), then the holder info that
// deadbolt run left beside each hold (one GET each, sent at once).
#pragma once

#include <functional>
#include <string>
#include <system_error>

#include "deadbolt/client.hpp"
#include "lock_state.hpp"

namespace deadbolt::cli {

/// Calls `done(ec, state)` once: `ec` is a failure of the inspection or of the connection; an info
/// key that is missing or is not deadbolt's only leaves its hold without info.
void read_lock_state(deadbolt::client& client, const std::string& name,
                     std::function<void(std::error_code, lock_state)> done);

}  // namespace deadbolt::cli
