// Builds a whole reply as a tree (deadbolt::reply) from the nodes the decoder streams, for the
// paths that want the reply whole: async_command, and the cluster's layout queries. The lock paths
// decode in place and never use it (it allocates).
#pragma once

#include "deadbolt/reply.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

class reply_tree {
 public:
  /// The next node of the reply, in pre-order.
  void add(const resp::node& n) {
    // A node's parent is the last element at each level above it.
    reply* target = &root_;
    if (n.depth > 0) {
      reply* parent = &root_;
      for (std::size_t d = 1; d < n.depth; ++d) parent = &parent->elements.back();
      parent->elements.emplace_back();
      target = &parent->elements.back();
    }
    target->type = n.type;
    target->text.assign(n.value);
  }

  reply& root() noexcept { return root_; }

 private:
  reply root_;
};

}  // namespace deadbolt::detail
