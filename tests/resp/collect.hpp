// Test helper: decodes a whole input into a flat list of nodes, optionally fed in pieces.
#pragma once

#include <ostream>  // doctest prints std::error_code through operator<<
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/resp/decoder.hpp"

namespace deadbolt::resp::test {

struct owned_node {
  resp::type type;
  std::size_t depth;
  std::size_t size;
  std::string value;
  bool end_of_reply;
  bool operator==(const owned_node& o) const {
    return type == o.type && depth == o.depth && size == o.size && value == o.value &&
           end_of_reply == o.end_of_reply;
  }
};

struct decoded {
  std::vector<owned_node> nodes;
  std::error_code error;
  std::size_t replies = 0;
  std::size_t leftover = 0;  // bytes never consumed
};

/// Feeds `input` to a decoder `piece` bytes at a time (all at once when piece == 0), the way a
/// connection does: append, decode every node available, drop consumed bytes.
inline decoded decode_all(std::string_view input, std::size_t piece = 0, const limits& l = {}) {
  decoder d(l);
  decoded out;
  std::string buffer;
  std::size_t fed = 0;
  if (piece == 0) piece = input.size();
  while (fed < input.size() || !buffer.empty()) {
    const std::size_t take = std::min(piece, input.size() - fed);
    buffer.append(input.substr(fed, take));
    fed += take;
    for (;;) {
      parse_result r = d.next(buffer);
      if (r.what == parse_result::kind::error) {
        out.error = r.error;
        out.leftover = buffer.size();
        return out;
      }
      if (r.what == parse_result::kind::need_more) break;
      out.nodes.push_back({r.node.type, r.node.depth, r.node.size, std::string(r.node.value), r.end_of_reply});
      if (r.end_of_reply) ++out.replies;
      buffer.erase(0, r.consumed);
    }
    if (take == 0) break;
  }
  out.leftover = buffer.size();
  return out;
}

}  // namespace deadbolt::resp::test
