// A Lua script embedded at build time (lua/*.lua), called by EVALSHA with EVAL-free fallback:
// on NOSCRIPT the client loads it with SCRIPT LOAD and retries (NOSCRIPT means it did not run).
#pragma once

#include <string_view>

namespace deadbolt::detail {

struct script {
  std::string_view name;  ///< file stem, for messages
  std::string_view sha1;  ///< 40 lowercase hex characters
  std::string_view body;
};

}  // namespace deadbolt::detail
