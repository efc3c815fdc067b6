#include "connect.hpp"

#include <sys/stat.h>

#include <cstdio>

#include "client_log.hpp"
#include "duration.hpp"
#include "exit_codes.hpp"
#include "deadbolt/url.hpp"
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
  attach_client_log(cfg);
  cfg.replica_sync = o.replica_sync;
  return cfg;
}

std::string where(const options& o) {
  deadbolt::endpoint ep;
  if (deadbolt::parse_url(o.url, ep)) return deadbolt::redacted_url(o.url);
  return ep.describe();
}

namespace {

// The TLS settings as the CLI's options name them.
std::string in_option_names(std::string why) {
  const std::pair<const char*, const char*> names[] = {
      {"tls.ca_file", "--tls-ca"}, {"tls.ca_path", "--tls-ca"}, {"tls.cert_file", "--tls-cert"},
      {"tls.key_file", "--tls-key"}, {"cert_file", "--tls-cert"}, {"key_file", "--tls-key"}};
  for (const auto& [field, option] : names) {
    for (auto at = why.find(field); at != std::string::npos; at = why.find(field, at)) {
      const bool whole = (at == 0 || why[at - 1] == ' ' || why[at - 1] == '\'') && why.compare(at, 2, "--") != 0;
      if (!whole) {
        ++at;
        continue;
      }
      why.replace(at, std::char_traits<char>::length(field), option);
      at += std::char_traits<char>::length(option);
    }
  }
  return why;
}

// What the server said, or why the connection failed, as a tail for a message: ` (server: "...")`.
std::string reason_tail(std::error_code ec) {
  if (std::string words = server_words_for(ec); !words.empty()) return " (server: \"" + words + "\")";
  const std::string failure = last_connection_failure();
  const bool says_more = ec == deadbolt::errc::not_connected || ec == deadbolt::errc::timed_out;
  if (says_more && !failure.empty() && failure != ec.message()) return " (last attempt: " + failure + ")";
  return {};
}

}  // namespace

int report_error(const options& o, std::error_code ec, const std::string& doing) {
  if (ec == deadbolt::errc::invalid_url) {
    std::fprintf(stderr, "deadbolt: invalid server URL '%s': %s\n", deadbolt::redacted_url(o.url).c_str(), deadbolt::why_invalid_url(o.url).c_str());
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
  if (ec == deadbolt::errc::tls_config_invalid || ec == deadbolt::errc::invalid_config) {
    const std::string why = make_config(o).why_invalid();
    if (!why.empty()) {
      std::fprintf(stderr, "deadbolt: %s\n", in_option_names(why).c_str());
      return exit_usage;
    }
    // Valid here: the server refused it (SELECT of a database it does not have).
    std::fprintf(stderr, "deadbolt: cannot use %s: %s%s\n", where(o).c_str(), ec.message().c_str(), reason_tail(ec).c_str());
    return exit_cannot_connect;
  }
  const bool unreachable = ec == deadbolt::errc::not_connected || ec == deadbolt::errc::timed_out ||
                           ec == deadbolt::errc::auth_failed || ec.category() == deadbolt::tls_verify_category() ||
                           ec == deadbolt::errc::tls_handshake_timed_out || ec == deadbolt::errc::closed_during_login ||
                           ec == deadbolt::errc::not_master || ec == deadbolt::errc::unknown_master ||
                           ec.category() == std::system_category() ||
                           ec.category() == std::generic_category() || ec.category() == asio::error::get_misc_category() ||
                           ec.category() == asio::error::get_netdb_category();
  if (unreachable || doing.empty()) {  // while connecting, any failure means the server cannot be used
    std::fprintf(stderr, "deadbolt: cannot connect to %s: %s%s\n", where(o).c_str(), ec.message().c_str(),
                 reason_tail(ec).c_str());
    return exit_cannot_connect;
  }
  std::fprintf(stderr, "deadbolt: %s: %s%s\n", doing.c_str(), ec.message().c_str(), reason_tail(ec).c_str());
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
  const std::string failure = last_connection_failure();
  std::fprintf(stderr, "deadbolt: cannot connect to %s: no connection within %s%s%s%s\n", where(o_).c_str(),
               format_duration(bound).c_str(), failure.empty() ? "" : " (last attempt: ", failure.c_str(),
               failure.empty() ? "" : ")");
  return exit_cannot_connect;
}

}  // namespace deadbolt::cli
