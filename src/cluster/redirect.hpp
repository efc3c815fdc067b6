// The redirections a cluster node answers with instead of running a command (docs/protocol.md §13):
//   MOVED <slot> <host>:<port>   the slot lives elsewhere for good: update the map, resend there;
//   ASK <slot> <host>:<port>     the slot is migrating: send ASKING then the command, once, there.
// Neither ran the command, so resending is safe.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "base/server_address.hpp"

namespace deadbolt::detail {

struct redirect {
  enum class kind { moved, ask };
  kind what = kind::moved;
  std::uint16_t slot = 0;
  /// Where to go. An empty host in the reply (a node that does not know its own address to announce)
  /// means the host of the node that answered: `replying_host` fills it in.
  server_address target;
};

/// The redirection in an error reply's text, or nothing when it is not one (or is malformed).
std::optional<redirect> parse_redirect(std::string_view error_text, std::string_view replying_host);

/// A "host:port" endpoint as cluster replies write it (base/host_port.hpp, cluster_reply grammar): IPv6
/// addresses come bare ("::1:7000") or in brackets ("[::1]:7000"); the host may be empty (":7000").
/// Nothing when the port is bad or a bracket is not closed right before the ':' ("[::1", "[::1]x:1").
std::optional<server_address> parse_host_port(std::string_view text);

}  // namespace deadbolt::detail
