#include "connect.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "duration.hpp"
#include "exit_codes.hpp"
#include "server_url.hpp"
#include "verbose_log.hpp"

namespace deadbolt::cli {

deadbolt::config make_config(const options& o) {
  deadbolt::config cfg;
  cfg.url = o.url;
  cfg.client_name = "deadbolt-cli";
  // A request waits this long for a connection too: a server that is down costs --connect-timeout.
  cfg.connect_timeout = o.connect_timeout;
  cfg.command_timeout = o.connect_timeout;
  if (o.watchdog) cfg.watchdog_timeout = *o.watchdog;
  struct stat ca {};
  const bool ca_is_dir = !o.tls_ca.empty() && ::stat(o.tls_ca.c_str(), &ca) == 0 && S_ISDIR(ca.st_mode);
  (ca_is_dir ? cfg.tls.ca_path : cfg.tls.ca_file) = o.tls_ca;
  cfg.tls.cert_file = o.tls_cert;
  cfg.tls.key_file = o.tls_key;
  cfg.tls.server_name = o.tls_server_name;
  cfg.tls.verify_peer = !o.tls_insecure;
  cfg.cluster_pubsub = o.cluster_pubsub;
  cfg.replica_sync = o.replica_sync;
  return cfg;
}

std::string where(const options& o) {
  deadbolt::endpoint ep;
  if (deadbolt::parse_url(o.url, ep)) return redacted(o.url);
  return ep.describe();
}

int report_error(const options& o, std::error_code ec, const std::string& doing) {
  if (ec == deadbolt::errc::invalid_url) {
    std::fprintf(stderr, "deadbolt: invalid server URL '%s': %s\n", redacted(o.url).c_str(), why_invalid(o.url).c_str());
    return exit_usage;
  }
  if (ec == deadbolt::errc::no_resolver) {
    std::fprintf(stderr, "deadbolt: %s: this build does not resolve host names; give an IP address\n",
                 where(o).c_str());
    return exit_usage;
  }
  if (ec == deadbolt::errc::not_built) {
    std::fprintf(stderr, "deadbolt: %s: %s\n", where(o).c_str(), ec.message().c_str());
    return exit_usage;
  }
  if (ec == deadbolt::errc::tls_config_invalid) {
    std::fprintf(stderr, "deadbolt: --tls-ca, --tls-cert, --tls-key: %s\n", ec.message().c_str());
    return exit_usage;
  }
  if (ec == deadbolt::errc::invalid_config) {  // the options are checked first; kept for safety
    std::fprintf(stderr, "deadbolt: invalid configuration (%s)\n", ec.message().c_str());
    return exit_usage;
  }
  const bool unreachable = ec == deadbolt::errc::not_connected || ec == deadbolt::errc::timed_out ||
                           ec == deadbolt::errc::auth_failed || ec.category() == deadbolt::tls_verify_category() ||
                           ec == deadbolt::errc::tls_handshake_timed_out || ec == deadbolt::errc::closed_during_login ||
                           ec == deadbolt::errc::not_master || ec == deadbolt::errc::unknown_master ||
                           ec.category() == std::system_category() ||
                           ec.category() == std::generic_category() || ec.category() == asio::error::get_misc_category() ||
                           ec.category() == asio::error::get_netdb_category();
  if (unreachable || doing.empty()) {  // while connecting, any failure means the server cannot be used
    std::fprintf(stderr, "deadbolt: cannot connect to %s: %s\n", where(o).c_str(), ec.message().c_str());
    return exit_cannot_connect;
  }
  std::fprintf(stderr, "deadbolt: %s: %s\n", doing.c_str(), ec.message().c_str());
  return exit_failure;
}

void connector::connecting() {
  deadbolt::endpoint ep;
  (void)deadbolt::parse_url(o_.url, ep);
  verbose("connecting to %s%s%s", where(o_).c_str(), ep.user.empty() ? "" : " as ", ep.user.c_str());
}

void connector::connected() {
  const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - started_);
  verbose("connected to %s in %s", where(o_).c_str(), format_duration(took).c_str());
}

int connector::gave_up(std::chrono::milliseconds bound) {
  std::fprintf(stderr, "deadbolt: cannot connect to %s: no connection within %s\n", where(o_).c_str(),
               format_duration(bound).c_str());
  return exit_cannot_connect;
}

}  // namespace deadbolt::cli
