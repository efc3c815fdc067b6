// One decoded RESP element.
#pragma once

#include <cstddef>
#include <string_view>

#include "deadbolt/resp/type.hpp"

namespace deadbolt::resp {

/// A node of a reply, in pre-order. `value` points into the caller's input buffer and stays valid
/// until the caller moves or overwrites those bytes.
struct node {
  resp::type type = resp::type::null;
  /// 0 for a top-level node, parent's depth + 1 for a child.
  std::size_t depth = 0;
  /// Aggregates: the declared count (pairs for map and attribute). Other kinds: 1.
  std::size_t size = 1;
  /// Payload of scalar kinds; empty for aggregates and null.
  std::string_view value;
};

}  // namespace deadbolt::resp
