// What the lock operations (src/lock/lock_ops.cpp) offer the acquire (src/lock/lock_attempt.cpp).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "deadbolt/detail/engine.hpp"
#include "engine/op_context.hpp"

namespace deadbolt::detail {

/// A fresh unlock latch key, `<prefix>:<32 hex digits>`: one per unlock, kept across its resends.
void new_unlock_latch(std::string& out, std::string_view prefix);

/// Completes `done` later with the configuration error, or shutting_down after shutdown(): true if it did.
bool refuse_operation(op_context& core, completion& done);
/// Releases one hold of `owner` that nobody wants (an acquisition given back: the acquire was
/// cancelled, or the hold table is full), then completes `then` with (report, 0).
void give_back_then(op_context& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                    completion& then, std::error_code report);

}  // namespace deadbolt::detail
