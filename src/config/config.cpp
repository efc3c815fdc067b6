#include "deadbolt/config.hpp"

#include <charconv>

#include "base/host_port.hpp"
#include "config/build_features.hpp"
#include "config/config_check.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/resolver.hpp"

namespace deadbolt {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

bool percent_decode(std::string_view in, std::string& out) {
  out.clear();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] != '%') {
      out += in[i];
      continue;
    }
    if (i + 2 >= in.size()) return false;
    const int hi = hex_value(in[i + 1]), lo = hex_value(in[i + 2]);
    if (hi < 0 || lo < 0) return false;
    out += static_cast<char>(hi * 16 + lo);
    i += 2;
  }
  return true;
}

template <typename Int>
bool parse_number(std::string_view s, Int& out) {
  if (s.empty()) return false;
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

bool parse_credentials(std::string_view userinfo, endpoint& out) {
  const auto colon = userinfo.find(':');
  if (colon == std::string_view::npos) {
    return percent_decode(userinfo, out.user);
  }
  if (!percent_decode(userinfo.substr(0, colon), out.user)) return false;
  if (!percent_decode(userinfo.substr(colon + 1), out.password)) return false;
  if (out.user.empty() && !out.password.empty()) out.user = "default";
  return true;
}

// The URL grammar of base/host_port.hpp (an unbracketed IPv6 address is ambiguous, so refused); a
// port left out keeps out.port's default.
bool parse_host_port(std::string_view text, endpoint& out) {
  const detail::host_port hp = detail::split_host_port<detail::host_port_grammar::url>(text);
  if (hp.problem != detail::host_port_problem::none) return false;
  out.host = std::string(hp.host);
  if (hp.port != 0) out.port = hp.port;
  return true;
}

bool parse_database(std::string_view s, endpoint& out) {
  if (s.empty()) return true;
  return parse_number(s, out.database) && out.database >= 0;
}

// Valkey's URL schemes name the same forms as Redis's: valkey:// is redis://, valkeys:// is rediss://,
// valkey+cluster:// is redis+cluster://, and so on.
std::string redis_twin(std::string_view scheme) {
  constexpr std::string_view valkey = "valkey";
  if (scheme.substr(0, valkey.size()) != valkey) return std::string(scheme);
  return "redis" + std::string(scheme.substr(valkey.size()));
}

}  // namespace

std::string endpoint::describe() const {
  if (kind == transport::unix_socket) return path;
  if (is_sentinel()) {
    std::string out = "master '" + sentinel_master + "' of sentinels ";
    for (std::size_t i = 0; i < sentinels.size(); ++i) {
      out += (i ? "," : "") + sentinels[i].host + ":" + std::to_string(sentinels[i].port);
    }
    return out;
  }
  if (host.find(':') != std::string::npos) return "[" + host + "]:" + std::to_string(port);
  return host + ":" + std::to_string(port);
}

std::error_code parse_url(std::string_view url, endpoint& out) {
  endpoint ep;
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos) return errc::invalid_url;
  const std::string scheme = redis_twin(url.substr(0, scheme_end));
  std::string_view rest = url.substr(scheme_end + 3);

  if (scheme == "unix") {
    ep.kind = endpoint::transport::unix_socket;
    if (const auto at = rest.find('@'); at != std::string_view::npos && rest.find('/') > at) {
      if (!parse_credentials(rest.substr(0, at), ep)) return errc::invalid_url;
      rest.remove_prefix(at + 1);
    }
    std::string_view query;
    if (const auto q = rest.find('?'); q != std::string_view::npos) {
      query = rest.substr(q + 1);
      rest = rest.substr(0, q);
    }
    if (rest.size() < 2 || rest[0] != '/') return errc::invalid_url;
    ep.path = std::string(rest);
    if (!query.empty()) {
      if (query.substr(0, 3) != "db=" || query.size() == 3 || !parse_database(query.substr(3), ep)) {
        return errc::invalid_url;
      }
    }
    out = std::move(ep);
    return {};
  }
  const bool cluster = scheme == "redis+cluster" || scheme == "rediss+cluster";
  const bool sentinel = scheme == "redis+sentinel" || scheme == "rediss+sentinel";
  ep.tls = scheme == "rediss" || scheme == "rediss+cluster" || scheme == "rediss+sentinel";
  if (scheme != "redis" && scheme != "rediss" && !cluster && !sentinel) return errc::invalid_url;

  if (const auto at = rest.rfind('@'); at != std::string_view::npos) {
    if (!parse_credentials(rest.substr(0, at), ep)) return errc::invalid_url;
    rest.remove_prefix(at + 1);
  }
  std::string_view db;
  if (const auto slash = rest.find('/'); slash != std::string_view::npos) {
    db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  if (sentinel) {
    // /MASTER_NAME[/db]: the name is required.
    const auto slash = db.find('/');
    ep.sentinel_master = std::string(db.substr(0, slash));
    db = slash == std::string_view::npos ? std::string_view() : db.substr(slash + 1);
    if (ep.sentinel_master.empty() || ep.sentinel_master.find_first_of(" ?#@,") != std::string::npos) {
      return errc::invalid_url;
    }
  }
  if (!parse_database(db, ep)) return errc::invalid_url;
  if (sentinel) {
    while (true) {
      const auto comma = rest.find(',');
      endpoint one;
      one.port = 26379;  // Sentinel's port
      if (!parse_host_port(rest.substr(0, comma), one)) return errc::invalid_url;
      ep.sentinels.push_back({one.host, one.port});
      if (comma == std::string_view::npos) break;
      rest.remove_prefix(comma + 1);
    }
    ep.host = ep.sentinels.front().host;  // until a sentinel names the master
    ep.port = ep.sentinels.front().port;
    out = std::move(ep);
    return {};
  }
  if (!cluster) {
    if (!parse_host_port(rest, ep)) return errc::invalid_url;
    out = std::move(ep);
    return {};
  }
  // A cluster has database 0 only; the seeds are comma-separated.
  if (ep.database != 0) return errc::invalid_url;
  while (true) {
    const auto comma = rest.find(',');
    endpoint one;
    if (!parse_host_port(rest.substr(0, comma), one)) return errc::invalid_url;
    ep.cluster_seeds.push_back({one.host, one.port});
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  ep.host = ep.cluster_seeds.front().host;
  ep.port = ep.cluster_seeds.front().port;
  out = std::move(ep);
  return {};
}

namespace detail {

std::error_code check_config(const config& c, endpoint& ep, config_problem* problem) {
  // The first problem found; its words only when someone asks (config::why_invalid).
  auto refuse = [problem](errc code, const char* field, const char* reason) -> std::error_code {
    if (problem) *problem = {field, reason, {}};
    return code;
  };
  if (auto ec = parse_url(c.url, ep)) return refuse(errc::invalid_url, "url", nullptr);
  if (ep.kind == endpoint::transport::tcp && !port::resolves_host_names()) {
    std::error_code not_numeric;
    asio::ip::make_address(ep.host, not_numeric);
    for (const auto& s : ep.cluster_seeds) {
      if (!not_numeric) asio::ip::make_address(s.host, not_numeric);
    }
    for (const auto& s : ep.sentinels) {
      if (!not_numeric) asio::ip::make_address(s.host, not_numeric);
    }
    if (not_numeric) return refuse(errc::no_resolver, "url", "this build resolves no host names: give IP addresses");
  }
  const build_features& built = this_build();
  if (ep.is_cluster() && !built.cluster) return refuse(errc::not_built, "url", "this build has no Redis Cluster support (DEADBOLT_CLUSTER=OFF)");
  if (ep.is_sentinel() && !built.sentinel) return refuse(errc::not_built, "url", "this build has no Sentinel support (DEADBOLT_SENTINEL=OFF)");
  if (ep.cluster_seeds.size() > c.max_cluster_nodes) return refuse(errc::invalid_config, "url", "more seed nodes than max_cluster_nodes");
  if (ep.sentinels.size() > 64) return refuse(errc::invalid_config, "url", "more than 64 sentinels");
  if (ep.tls && !built.tls) return refuse(errc::not_built, "url", "this build has no TLS (DEADBOLT_TLS=OFF)");
  using std::chrono::milliseconds;
  const errc bad = errc::invalid_config;
  if (c.connect_timeout <= milliseconds(0)) return refuse(bad, "connect_timeout", "must be more than 0");
  if (c.command_timeout <= milliseconds(0)) return refuse(bad, "command_timeout", "must be more than 0");
  if (c.watchdog_timeout < milliseconds(30)) return refuse(bad, "watchdog_timeout", "must be at least 30ms");
  if (c.fair_wait_timeout <= milliseconds(0)) return refuse(bad, "fair_wait_timeout", "must be more than 0");
  if (c.reconnect_min <= milliseconds(0)) return refuse(bad, "reconnect_min", "must be more than 0");
  if (c.reconnect_max < c.reconnect_min) return refuse(bad, "reconnect_max", "must not be less than reconnect_min");
  if (c.ping_interval < milliseconds(0)) return refuse(bad, "ping_interval", "must not be negative (0 turns the checks off)");
  if (c.ping_timeout <= milliseconds(0)) return refuse(bad, "ping_timeout", "must be more than 0");
  if (c.max_channels == 0) return refuse(bad, "max_channels", "must be at least 1");
  if (c.max_waiters == 0) return refuse(bad, "max_waiters", "must be at least 1");
  if (c.max_held_locks == 0) return refuse(bad, "max_held_locks", "must be at least 1");
  if (c.max_cluster_nodes == 0 || c.max_cluster_nodes >= 0xFFFF) return refuse(bad, "max_cluster_nodes", "must be from 1 to 65534");
  if (c.replica_sync_timeout <= milliseconds(0)) return refuse(bad, "replica_sync_timeout", "must be more than 0");
  if (c.replica_sync_retries < 0 || c.replica_sync_retries > 100) return refuse(bad, "replica_sync_retries", "must be from 0 to 100");
  if (c.replica_sync_retry_delay < milliseconds(0)) return refuse(bad, "replica_sync_retry_delay", "must not be negative");
  if (c.reply_limits.max_bulk_length < 512) return refuse(bad, "reply_limits.max_bulk_length", "must be at least 512");
  if (c.reply_limits.max_depth < 2) return refuse(bad, "reply_limits.max_depth", "must be at least 2");
  if (c.reply_limits.max_elements < 16) return refuse(bad, "reply_limits.max_elements", "must be at least 16");
  if (c.client_name.find_first_of(" \r\n") != std::string::npos) return refuse(bad, "client_name", "must not contain spaces or line breaks");
  if (c.lease_margin < milliseconds(0)) return refuse(bad, "lease_margin", "must not be negative");
  if (!(c.clock_drift_factor >= 0 && c.clock_drift_factor < 0.5)) return refuse(bad, "clock_drift_factor", "must be from 0 to less than 0.5");
  // Small enough that a watchdog hold's deadline comes after two renewals.
  const double watchdog_ms = static_cast<double>(c.watchdog_timeout.count());
  if (static_cast<double>(c.lease_margin.count()) + watchdog_ms * c.clock_drift_factor >= watchdog_ms / 3) {
    return refuse(bad, "lease_margin", "with clock_drift_factor, must come to less than a third of watchdog_timeout");
  }
  // Last: it reads the CA, certificate and key files.
  if (ep.tls) {
    std::string why;
    if (auto ec = make_tls_context(c.tls, ep.tls_context, problem ? &why : nullptr)) {
      if (problem) *problem = {"tls", nullptr, std::move(why)};
      return ec;
    }
  }
  return {};
}

}  // namespace detail

std::error_code config::validate(endpoint& ep) const { return detail::check_config(*this, ep, nullptr); }

}  // namespace deadbolt
