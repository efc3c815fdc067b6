// ASKING: the one resend of a command after a cluster's ASK redirection goes to the importing node with
// ASKING written right before it, in the same write; ASKING's own answer comes first and is not the
// command's. One piece of the pipeline's record of a request.
#pragma once

#include <system_error>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

class asking_prefix {
 public:
  /// Before the command is encoded: writes ASKING when the cluster routing asks for it.
  void encode(resp::encoder& e, bool asking) {
    awaiting_reply_ = asking;
    if (asking) e.command("ASKING");
  }
  /// Each node of the reply stream: true when `n` was ASKING's answer, which the command must not see
  /// (+OK; an error too: the command after it fails on its own then). Anything but a whole one-node
  /// reply means the stream is out of step: `ec` is set.
  bool takes(const resp::node& n, bool end_of_reply, std::error_code& ec) noexcept {
    if (!awaiting_reply_) return false;
    if (n.depth != 0 || !end_of_reply) ec = errc::protocol_error;
    awaiting_reply_ = false;
    return true;
  }

 private:
  bool awaiting_reply_ = false;
};

}  // namespace deadbolt::detail
