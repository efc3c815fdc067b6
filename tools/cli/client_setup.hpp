// What every subcommand does first: build the client from the options, connect, and say plainly why
// not when that fails.
#pragma once

#include <cstdio>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace deadbolt::cli {

inline deadbolt::config make_config(const options& o) {
  deadbolt::config cfg;
  cfg.url = o.url;
  cfg.client_name = "deadbolt-cli";
  if (o.watchdog) cfg.watchdog_timeout = *o.watchdog;
  return cfg;
}

/// "127.0.0.1:6379" for messages (the URL itself when it does not parse).
inline std::string where(const options& o) {
  deadbolt::endpoint ep;
  return deadbolt::parse_url(o.url, ep) ? o.url : ep.describe();
}

/// Prints why the client cannot be used; returns the exit code to use.
inline int report_connect_error(const options& o, std::error_code ec) {
  if (ec == deadbolt::errc::invalid_url || ec == deadbolt::errc::invalid_config) {
    std::fprintf(stderr, "deadbolt: %s: %s\n", ec.message().c_str(), o.url.c_str());
    return exit_usage;
  }
  std::fprintf(stderr, "deadbolt: cannot connect to %s: %s\n", where(o).c_str(), ec.message().c_str());
  return exit_cannot_connect;
}

}  // namespace deadbolt::cli
