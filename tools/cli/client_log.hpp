// The library's log lines (config::log), which carry what its error codes cannot: the server's own
// words ("NOPERM User u has no permissions to run the 'evalsha' command") and why a connection
// failed ("Connection refused"). With -v they are printed as they come, timestamped like the CLI's
// own lines (reconnects, failovers, Sentinel's and the cluster's layout changes); always, the last of
// each kind is kept for the message of a failure.
#pragma once

#include <string>
#include <system_error>

#include "deadbolt/config.hpp"

namespace deadbolt::cli {

/// Sets `cfg.log` to the CLI's hook.
void attach_client_log(deadbolt::config& cfg);

/// The server's words behind `ec`: the error text of the last error reply logged for that code (or
/// of a refused login); empty if none was.
std::string server_words_for(std::error_code ec);

/// Why the last connection attempt failed, as the library logged it ("Connection refused"); empty
/// if none failed.
std::string last_connection_failure();

/// The server's words in a library log line: from the first ": " followed by an upper-case error
/// code ("ERR", "NOPERM", ...) to the end; empty if there are none. (Exposed for its test.)
std::string server_words_in(const std::string& line);

}  // namespace deadbolt::cli
