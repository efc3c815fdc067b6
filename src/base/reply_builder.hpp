// Builds a whole reply tree (deadbolt::reply) from the nodes a request receives in pre-order: for
// async_command and inspect, whose callers want the reply's structure rather than one number.
#pragma once

#include <utility>

#include "deadbolt/reply.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

class reply_builder {
 public:
  void add(const resp::node& n) {
    // Nodes arrive in pre-order, so a node's parent is the last element at each level above it.
    reply* target = &result_;
    if (n.depth > 0) {
      reply* parent = &result_;
      for (std::size_t d = 1; d < n.depth; ++d) parent = &parent->elements.back();
      parent->elements.emplace_back();
      target = &parent->elements.back();
    }
    target->type = n.type;
    target->text.assign(n.value);
  }
  const reply& result() const noexcept { return result_; }
  reply take() { return std::exchange(result_, reply{}); }

 private:
  reply result_;
};

}  // namespace deadbolt::detail
