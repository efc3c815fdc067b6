#include "deadbolt/url.hpp"

#include <charconv>

#include "base/host_port.hpp"

namespace deadbolt {
namespace {

using detail::host_port;
using detail::host_port_grammar;
using detail::host_port_problem;
using detail::split_host_port;

struct url_parts {
  std::string_view scheme;     // "redis", "unix", ...; empty when there is no "://"
  std::string_view user;       // before ':' in the user info
  std::string_view password;   // after it
  bool has_userinfo = false;
  bool has_password = false;
  std::string_view rest;       // after the user info's '@' (or after "://")
};

// Splits like deadbolt::parse_url: the last '@' ends a redis:// user info, a unix:// one ends at the
// first '@' before the path.
url_parts split(std::string_view url) {
  url_parts p;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) {
    p.rest = url;
    return p;
  }
  p.scheme = url.substr(0, scheme_end);
  std::string_view rest = url.substr(scheme_end + 3);
  std::size_t at = std::string_view::npos;
  if (p.scheme == "unix") {
    at = rest.find('@');
    if (at != std::string_view::npos && rest.find('/') < at) at = std::string_view::npos;
  } else {
    at = rest.rfind('@');
  }
  if (at != std::string_view::npos) {
    p.has_userinfo = true;
    const std::string_view info = rest.substr(0, at);
    const auto colon = info.find(':');
    p.user = info.substr(0, colon);
    if (colon != std::string_view::npos) {
      p.has_password = true;
      p.password = info.substr(colon + 1);
    }
    rest.remove_prefix(at + 1);
  }
  p.rest = rest;
  return p;
}

std::string join(const url_parts& p, std::string_view password) {
  std::string out(p.scheme);
  out += "://";
  if (!p.user.empty() || !password.empty()) {
    out += p.user;
    if (!password.empty()) out += ':';
    out += password;
    out += '@';
  }
  out += p.rest;
  return out;
}

bool bad_percent_escape(std::string_view s) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '%') continue;
    if (i + 2 >= s.size() || !hex(s[i + 1]) || !hex(s[i + 2])) return true;
    i += 2;
  }
  return false;
}

bool is_number(std::string_view s, long long max) {
  long long v = 0;
  const auto r = std::from_chars(s.data(), s.data() + s.size(), v);
  return !s.empty() && r.ec == std::errc() && r.ptr == s.data() + s.size() && v >= 0 && v <= max;
}

std::string quoted(std::string_view s) { return "'" + std::string(s) + "'"; }

std::string why_invalid_tcp(std::string_view rest) {
  std::string_view db;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  const host_port hp = split_host_port<host_port_grammar::url>(rest);
  switch (hp.problem) {
    case host_port_problem::unclosed_bracket: return "the IPv6 address has no closing ']'";
    case host_port_problem::after_bracket: return "unexpected " + quoted(hp.piece) + " after the IPv6 address";
    case host_port_problem::bare_ipv6: return "an IPv6 address needs brackets: redis://[::1]:6379";
    case host_port_problem::no_host: return "no host (redis://HOST[:PORT][/DB])";
    case host_port_problem::bad_host: return "the host " + quoted(hp.piece) + " has a character hosts cannot have";
    case host_port_problem::bad_port: return "the port " + quoted(hp.piece) + " is not a number from 1 to 65535";
    case host_port_problem::no_port:  // not in the URL grammar
    case host_port_problem::none: break;
  }
  if (!db.empty() && !is_number(db, 2147483647)) return "the database " + quoted(db) + " is not a number";
  return "it does not parse";
}

std::string why_invalid_unix(std::string_view rest) {
  std::string_view query;
  if (const auto q = rest.find('?'); q != std::string_view::npos) {
    query = rest.substr(q + 1);
    rest = rest.substr(0, q);
  }
  if (rest.size() < 2 || rest[0] != '/') return "no socket path (unix:///path/to/socket)";
  if (!query.empty() && (query.substr(0, 3) != "db=" || !is_number(query.substr(3), 2147483647))) {
    return "the query " + quoted(query) + " is not db=NUMBER";
  }
  return "it does not parse";
}

// redis+cluster://HOST:PORT,HOST:PORT[/]: seeds as redis:// hosts, database 0 only.
std::string why_invalid_cluster(std::string_view rest) {
  std::string_view seeds = rest;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    const auto db = rest.substr(slash + 1);
    if (!db.empty() && db != "0") return "a cluster has database 0 only (redis+cluster://HOST:PORT,HOST:PORT/)";
    seeds = rest.substr(0, slash);
  }
  while (true) {
    const auto comma = seeds.find(',');
    const auto seed = seeds.substr(0, comma);
    if (seed.empty()) return "an empty seed node in the list (redis+cluster://HOST:PORT,HOST:PORT/)";
    std::string why = why_invalid_tcp(seed);
    if (why != "it does not parse") return "seed " + quoted(seed) + ": " + why;
    if (comma == std::string_view::npos) break;
    seeds.remove_prefix(comma + 1);
  }
  return "it does not parse";
}

}  // namespace

std::string redacted_url(std::string_view url) {
  const url_parts p = split(url);
  if (p.scheme.empty()) {  // not a URL, but it may still carry "user:password@"
    const auto at = url.rfind('@'), colon = url.find(':');
    if (at == std::string_view::npos || colon == std::string_view::npos || colon > at) return std::string(url);
    return std::string(url.substr(0, colon + 1)) + "***" + std::string(url.substr(at));
  }
  if (!p.has_password || p.password.empty()) return std::string(url);
  return join(p, "***");
}

std::string why_invalid_url(std::string_view url) {
  const url_parts p = split(url);
  if (p.scheme.empty() && url.find("://") == std::string_view::npos) {
    return "not a URL: expected redis://HOST[:PORT][/DB] or unix:///PATH";
  }
  // valkey... names the same URL as redis..., and rediss+... is the same URL over TLS.
  std::string twin(p.scheme);
  if (twin.rfind("valkey", 0) == 0) twin.replace(0, 6, "redis");
  const std::string_view scheme = twin.rfind("rediss", 0) == 0 ? std::string_view(twin).substr(1) : twin;
  if (scheme != "redis" && scheme != "unix" && scheme != "redis+cluster" && scheme != "redis+sentinel") {
    return "unknown scheme " + quoted(p.scheme) +
           " (redis://, redis+cluster://, redis+sentinel://, their valkey twins, or unix://)";
  }
  if (bad_percent_escape(p.user) || bad_percent_escape(p.password)) {
    return "a bad %-escape in the user or password (% must be followed by two hex digits)";
  }
  if (scheme == "unix") return why_invalid_unix(p.rest);
  if (scheme == "redis") return why_invalid_tcp(p.rest);
  if (scheme == "redis+sentinel") {
    return "expected redis+sentinel://HOST[:PORT][,HOST[:PORT]...]/MASTER_NAME[/DB]";
  }
  return why_invalid_cluster(p.rest);
}

std::string url_without_password(std::string_view url) {
  const url_parts p = split(url);
  if (!p.has_password) return std::string(url);
  return join(p, "");
}

std::string url_with_password(std::string_view url, std::string_view password) {
  std::string encoded;
  for (unsigned char c : password) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' ||
                       c == '.' || c == '_' || c == '~';
    if (plain) {
      encoded += static_cast<char>(c);
    } else {
      static const char digits[] = "0123456789ABCDEF";
      encoded += '%';
      encoded += digits[c >> 4];
      encoded += digits[c & 15];
    }
  }
  return join(split(url), encoded);
}

}  // namespace deadbolt
