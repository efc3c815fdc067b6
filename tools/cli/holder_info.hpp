// Who holds a lock, in human terms. Redisson's data names a holder only as "<client uuid>:<thread>";
// deadbolt run adds a small key of its own beside the lock, never touching Redisson's keys:
//   deadbolt_holder:{NAME}:<owner field or permit id>  STRING "host=..\npid=..\nsince=..\ncommand=.."
// with the hold's lease as its TTL (refreshed while held, deleted on release), so it ends with the
// hold even if deadbolt is killed. Java peers never read it; status shows it when present.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::cli {

struct holder_info {
  std::string host;
  std::string pid;
  std::string command;
  std::int64_t since_ms = 0;  ///< when it took the lock, ms since the epoch
};

/// The info key for `holder` (an owner field "<uuid>:<n>[:write]" or a permit id's hex) of lock `name`.
std::string holder_info_key(std::string_view name, std::string_view holder);

/// This process's info: host name, pid, COMMAND (joined with spaces, shortened), now.
std::string encode_holder_info(const std::vector<std::string>& command);

std::optional<holder_info> decode_holder_info(std::string_view text);

/// "pid 123 on build-7, since 12.0s: make deploy"
std::string describe(const holder_info& info);

}  // namespace deadbolt::cli
