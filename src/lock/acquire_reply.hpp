// Reads a lock's acquire script reply (every kind answers in one shape): {the owner's new hold count}
// when acquired ({count, token} when the kind hands out tokens), else the wait ahead (an integer TTL,
// which the kind's protocol turns into how long to wait). Only positive counts and tokens are an
// acquisition; nil (Redisson's own answer, never ours) and any other shape are protocol errors.
#pragma once

#include <cstddef>
#include <cstdint>

#include "deadbolt/resp/node.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "wait/wait_driver.hpp"

namespace deadbolt::detail {

class acquire_reply {
 public:
  void reset(bool with_token);
  /// Every node of the reply, in pre-order.
  void take(const resp::node& n);
  /// What it meant: acquired (value: the token, or 1), busy as `p` says, or failed.
  wait_outcome outcome(const lock_protocol& p, const lock_names& n, backoff_state& b) const;
  /// Acquired: the owner's count on the server.
  std::int64_t count() const { return count_; }

 private:
  scalar_reply reply_;
  bool with_token_ = false;
  std::size_t items_ = 0;
  std::int64_t count_ = 0;
  std::int64_t token_ = 0;
};

}  // namespace deadbolt::detail
