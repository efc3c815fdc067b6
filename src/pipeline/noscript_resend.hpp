// NOSCRIPT: a request that ran a script by its hash (EVALSHA) on a server that does not have it (a
// restart, SCRIPT FLUSH, a new node) is sent again with the script's body (EVAL), which also caches
// it there. The request never sees the NOSCRIPT. One piece of the pipeline's record of a request.
#pragma once

#include "base/server_error.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

class noscript_resend {
 public:
  /// Every submission starts with the hash; only a NOSCRIPT reply sends the body.
  void submitted() noexcept { send_body_ = false; }
  /// Whether the request's encode() writes the body (EVAL) rather than the hash (EVALSHA).
  bool send_body() const noexcept { return send_body_; }
  /// The request is (re)encoded: its next reply is judged afresh.
  void encoded() noexcept { swallowing_ = false; }

  /// Each node of the reply: whether it is (part of) the NOSCRIPT this piece answers for, which the
  /// request must not see. `runs_script`: what the request's encode() said it wrote.
  bool swallows(const resp::node& n, bool runs_script) noexcept {
    if (n.depth == 0 && runs_script && !send_body_ && resp::is_error(n.type) &&
        server_error_kind_of(n.value) == server_error_kind::noscript) {
      swallowing_ = true;
    }
    return swallowing_;
  }
  /// At the reply's end: true when the script did not run and the request goes again with its body.
  bool resend_with_body() noexcept {
    if (!swallowing_) return false;
    send_body_ = true;
    return true;
  }

 private:
  bool send_body_ = false;
  bool swallowing_ = false;  // the reply being read is a NOSCRIPT
};

}  // namespace deadbolt::detail
