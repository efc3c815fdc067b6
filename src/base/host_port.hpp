// "host:port" as deadbolt reads it, in the two grammars it meets, in one function:
//   url            a URL's authority (RFC 3986): the host is required, an IPv6 address comes in brackets
//                  ("[::1]:6379"), the port may be left out; a bare IPv6 address is refused (ambiguous).
//   cluster_reply  an endpoint in a cluster's replies (MOVED, ASK): the port is required and is what
//                  follows the last ':', so Redis's bare IPv6 ("::1:7000") reads too, as does the
//                  bracketed form; the host may be empty (the node that answered: the caller fills it).
// The URL's error messages (config/url_text) are made from the same parse as its acceptance
// (config/config), so what is refused and what the message says cannot drift apart.
//
// Header-only, views only, and the grammar a template argument: a program instantiates only the
// grammars it reads, and the URL parse inlines into config's URL reader. The embedded profile (one
// server, no Cluster) thus carries no more code than a hand-written parse there (bench/run footprint).
#pragma once

#include <cstdint>
#include <string_view>

namespace deadbolt::detail {

enum class host_port_grammar { url, cluster_reply };

/// What is wrong with a "host:port", if anything.
enum class host_port_problem {
  none,
  unclosed_bracket,  ///< "[::1" (both grammars)
  after_bracket,     ///< "[::1]x": `piece` is what follows the bracket (both grammars)
  bare_ipv6,         ///< "::1:6379": an IPv6 address without brackets (url)
  no_host,           ///< nothing before the port (url)
  bad_host,          ///< a character hosts cannot have (/?#@[] or a space; url): `piece` is the host
  bad_port,          ///< not a number from 1 to 65535: `piece` is the port as written
  no_port,           ///< no ':' at all (cluster_reply)
};

struct host_port {
  host_port_problem problem = host_port_problem::none;
  std::string_view host;   ///< without brackets; a view into the text
  std::uint16_t port = 0;  ///< 0: the text has none (url only)
  std::string_view piece;  ///< the part the problem is about
};

/// A port as written: decimal digits only (leading zeros allowed), 1 to 65535; 0 when it is not one.
constexpr std::uint16_t port_number(std::string_view text) noexcept {
  if (text.empty()) return 0;
  unsigned value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return 0;
    value = value * 10 + static_cast<unsigned>(c - '0');
    if (value > 65535) return 0;
  }
  return static_cast<std::uint16_t>(value);
}

/// Splits `text` by `Grammar`; host and port are valid only when problem is none.
template <host_port_grammar Grammar>
constexpr host_port split_host_port(std::string_view text) noexcept {
  constexpr bool url = Grammar == host_port_grammar::url;
  host_port out;
  const auto refuse = [&out](host_port_problem what, std::string_view piece) {
    out.problem = what;
    out.piece = piece;
    return out;
  };
  std::string_view port;
  bool has_port = false;
  // IPv6, for both grammars: in brackets it is always read; bare only where the port is what follows
  // the last ':' (cluster replies), since in a URL the first ':' ends the host.
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return refuse(host_port_problem::unclosed_bracket, text);
    out.host = text.substr(1, close - 1);
    const auto after = text.substr(close + 1);
    if (!after.empty() && after[0] != ':') return refuse(host_port_problem::after_bracket, after);
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
  } else if (const auto colon = url ? text.find(':') : text.rfind(':'); colon != std::string_view::npos) {
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    has_port = true;
    if (url && port.find(':') != std::string_view::npos) return refuse(host_port_problem::bare_ipv6, text);
  } else {
    out.host = text;
  }
  if constexpr (url) {
    if (out.host.empty()) return refuse(host_port_problem::no_host, out.host);
    if (out.host.find_first_of("/?#@[] ") != std::string_view::npos) return refuse(host_port_problem::bad_host, out.host);
  } else {
    if (!has_port) return refuse(host_port_problem::no_port, text);
  }
  if (has_port) {
    out.port = port_number(port);
    if (out.port == 0) return refuse(host_port_problem::bad_port, port);
  }
  return out;
}

}  // namespace deadbolt::detail
