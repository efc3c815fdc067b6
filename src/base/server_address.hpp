// One place to connect to, in plain terms (no Asio types): what the session state machine is told by
// the address source and the resolver, and what it asks the stream to connect to.
#pragma once

#include <cstdint>
#include <string>

namespace deadbolt::detail {

struct server_address {
  enum class transport { tcp, unix_socket };
  transport kind = transport::tcp;
  /// tcp: a host name, or an IP address literal when `numeric`.
  std::string host;
  std::uint16_t port = 0;
  /// unix_socket: the socket's path.
  std::string path;
  /// The host is an IP address literal: connect without resolving (an embedded build may have no
  /// resolver at all).
  bool numeric = false;

  bool operator==(const server_address& o) const {
    return kind == o.kind && host == o.host && port == o.port && path == o.path && numeric == o.numeric;
  }
  bool operator!=(const server_address& o) const { return !(*this == o); }
};

}  // namespace deadbolt::detail
