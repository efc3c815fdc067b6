// Bounds the decoder enforces on untrusted input.
#pragma once

#include <cstddef>

namespace deadbolt::resp {

/// Limits sized for a lock client by default: lock replies are small, so anything far larger is an
/// error rather than a reason to buffer more.
struct limits {
  /// Deepest nesting of aggregates; at most decoder::depth_capacity.
  std::size_t max_depth = 8;
  /// Most elements one aggregate may declare (a map of N pairs declares 2N).
  std::size_t max_elements = 4096;
  /// Longest bulk payload, simple string or error line, in bytes.
  std::size_t max_bulk_length = 64 * 1024;
  /// Most bytes one top-level reply may span, headers included.
  std::size_t max_reply_size = 1024 * 1024;
};

}  // namespace deadbolt::resp
