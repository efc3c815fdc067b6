// A Lua script embedded at build time (lua/*.lua), called by EVALSHA; on NOSCRIPT (the script did not
// run) the client sends the same call again as EVAL with the body (src/pipeline/pipeline.cpp).
#pragma once

#include <string_view>

namespace deadbolt::detail {

struct script {
  std::string_view name;  ///< file stem, for messages
  std::string_view sha1;  ///< 40 lowercase hex characters
  std::string_view body;
};

}  // namespace deadbolt::detail
