// "host:port" as deadbolt reads it, in the two grammars it meets, in one place:
//   url            a URL's authority (RFC 3986): the host is required, an IPv6 address comes in brackets
//                  ("[::1]:6379"), the port may be left out; a bare IPv6 address is refused (ambiguous).
//   cluster_reply  an endpoint in a cluster's replies (MOVED, ASK): the port is required and is what
//                  follows the last ':', so Redis's bare IPv6 ("::1:7000") reads too, as does the
//                  bracketed form; the host may be empty (the node that answered: the caller fills it).
// The URL's error messages (config/url_text) are made from the same parse as its acceptance, so what
// is refused and what the message says cannot drift apart.
#pragma once

#include <cstdint>
#include <string_view>

namespace deadbolt::detail {

enum class host_port_grammar { url, cluster_reply };

/// What is wrong with a "host:port", if anything.
enum class host_port_problem {
  none,
  unclosed_bracket,  ///< "[::1" (url)
  after_bracket,     ///< "[::1]x": `piece` is what follows the bracket (url)
  bare_ipv6,         ///< "::1:6379": an IPv6 address without brackets (url)
  no_host,           ///< nothing before the port (url)
  bad_host,          ///< a character hosts cannot have (/?#@[] or a space; url): `piece` is the host
  bad_port,          ///< not a number from 1 to 65535: `piece` is the port as written
  no_port,           ///< no ':' at all (cluster_reply)
};

struct host_port {
  host_port_problem problem = host_port_problem::none;
  std::string_view host;      ///< without brackets; a view into the text
  std::uint16_t port = 0;     ///< 0: the text has none (url only)
  std::string_view piece;     ///< the part the problem is about
};

/// Splits `text` by `grammar`; host and port are valid only when problem is none.
host_port split_host_port(std::string_view text, host_port_grammar grammar);

}  // namespace deadbolt::detail
