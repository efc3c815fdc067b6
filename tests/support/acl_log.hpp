// Reading a server's ACL LOG (as redis-cli prints `ACL LOG 128`: a flat list of field, value lines
// per entry) for the tests that prove a least-privilege rule.
#pragma once

#include <string>

namespace deadbolt::test {

/// What the server refused `user`: the entries of `acl_log` naming that user, as "reason object; "
/// each (empty: nothing).
inline std::string refused_in_acl_log(const std::string& acl_log, const std::string& user) {
  std::string out, reason, object, who, field;
  std::size_t at = 0;
  auto flush = [&] {
    if (who == user) out += reason + " " + object + "; ";
    reason = object = who = "";
  };
  while (at <= acl_log.size()) {
    const auto end = acl_log.find('\n', at) == std::string::npos ? acl_log.size() : acl_log.find('\n', at);
    const std::string line = acl_log.substr(at, end - at);
    if (line == "count") flush();
    if (field == "reason") reason = line;
    if (field == "object") object = line;
    if (field == "username") who = line;
    field = line;
    at = end + 1;
  }
  flush();
  return out;
}

}  // namespace deadbolt::test
