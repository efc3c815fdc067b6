// Turns the reply of lua/inspect.lua into an object_info: decodes the keys' data and decides which
// kind of object it is (docs/protocol.md §0). Pure: no I/O, so it is tested on hand-made replies too.
#pragma once

#include <cstddef>
#include <system_error>

#include "deadbolt/inspect.hpp"
#include "deadbolt/reply.hpp"

namespace deadbolt::detail {

/// How many entries lua/inspect.lua lists per collection (a hash's fields, the queue, the permits):
/// keeps the reply within the default reply limits whatever the key holds.
constexpr std::size_t inspect_most_entries = 256;

/// Fills `out` from the script's reply; errc::protocol_error if the reply is not of its shape, the
/// server's error if it is an error reply.
std::error_code read_object(const reply& script_reply, object_info& out);

}  // namespace deadbolt::detail
