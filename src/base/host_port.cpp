#include "base/host_port.hpp"

#include <charconv>

namespace deadbolt::detail {
namespace {

bool read_port(std::string_view text, std::uint16_t& port) {
  unsigned value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || value == 0 || value > 65535) {
    return false;
  }
  port = static_cast<std::uint16_t>(value);
  return true;
}

host_port problem(host_port_problem what, std::string_view piece = {}) {
  host_port out;
  out.problem = what;
  out.piece = piece;
  return out;
}

host_port split_url(std::string_view text) {
  host_port out;
  std::string_view port;
  bool has_port = false;
  if (!text.empty() && text[0] == '[') {
    const auto close = text.find(']');
    if (close == std::string_view::npos) return problem(host_port_problem::unclosed_bracket);
    out.host = text.substr(1, close - 1);
    const auto after = text.substr(close + 1);
    if (!after.empty() && after[0] != ':') return problem(host_port_problem::after_bracket, after);
    has_port = !after.empty();
    if (has_port) port = after.substr(1);
  } else if (const auto colon = text.find(':'); colon != std::string_view::npos) {
    out.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    has_port = true;
    if (port.find(':') != std::string_view::npos) return problem(host_port_problem::bare_ipv6, text);
  } else {
    out.host = text;
  }
  if (out.host.empty()) return problem(host_port_problem::no_host);
  if (out.host.find_first_of("/?#@[] ") != std::string_view::npos) return problem(host_port_problem::bad_host, out.host);
  if (has_port && !read_port(port, out.port)) return problem(host_port_problem::bad_port, port);
  return out;
}

host_port split_cluster_reply(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) return problem(host_port_problem::no_port, text);
  host_port out;
  out.host = text.substr(0, colon);
  const auto port = text.substr(colon + 1);
  if (!read_port(port, out.port)) return problem(host_port_problem::bad_port, port);
  if (out.host.size() >= 2 && out.host.front() == '[' && out.host.back() == ']') {
    out.host = out.host.substr(1, out.host.size() - 2);
  }
  return out;
}

}  // namespace

host_port split_host_port(std::string_view text, host_port_grammar grammar) {
  return grammar == host_port_grammar::url ? split_url(text) : split_cluster_reply(text);
}

}  // namespace deadbolt::detail
