// Sans-I/O, incremental, pull-style RESP2/RESP3 decoder.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/error.hpp"
#include "deadbolt/resp/limits.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::resp {

/// What one call to decoder::next() produced.
struct parse_result {
  enum class kind : std::uint8_t { node, need_more, error };
  kind what = kind::need_more;
  /// Bytes of input the node used (drop them before the next call); 0 unless what == node.
  std::size_t consumed = 0;
  /// The node, when what == node.
  resp::node node;
  /// True when this node completed a top-level reply.
  bool end_of_reply = false;
  /// The reason, when what == error.
  std::error_code error;
};

/// Decodes one node at a time from the front of the bytes it is given. It keeps no copy of the input:
/// the caller owns the buffer, passes the unconsumed bytes to next(), and drops `consumed` bytes after
/// each node. A node is produced only once all of its own bytes are present (a bulk string's payload
/// included), so input may be split at any byte. No recursion, no allocation; the nesting stack is a
/// fixed array.
class decoder {
 public:
  /// Hard upper bound for limits::max_depth.
  static constexpr std::size_t depth_capacity = 16;

  explicit decoder(const resp::limits& l = {}) noexcept;

  /// Parses the next node at the front of `input`.
  parse_result next(std::string_view input) noexcept;

  /// True between the first node of a reply and the node that ends it.
  bool in_reply() const noexcept { return depth_ > 0 || reply_bytes_ > 0; }
  /// True once an error was reported (until reset()).
  bool failed() const noexcept { return failed_; }
  /// Forgets all state: use after dropping the connection.
  void reset() noexcept;

  const resp::limits& limits() const noexcept { return limits_; }

 private:
  struct frame {
    std::size_t remaining;
    bool attribute;
  };

  parse_result fail(error e) noexcept;
  parse_result emit(const node& n, std::size_t consumed) noexcept;
  parse_result aggregate(type t, std::int64_t declared, std::size_t consumed) noexcept;

  resp::limits limits_;
  std::array<frame, depth_capacity> stack_{};
  std::size_t depth_ = 0;
  std::size_t reply_bytes_ = 0;
  bool failed_ = false;
};

}  // namespace deadbolt::resp
