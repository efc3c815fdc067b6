// Where the password comes from, and keeping it away from COMMAND. A password is taken from
// --password-file FILE, else $DEADBOLT_PASSWORD, else the URL (--url or $REDIS_URL). COMMAND's
// environment never carries one: DEADBOLT_PASSWORD is removed and REDIS_URL loses its password.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"

namespace deadbolt::cli {

inline constexpr const char* password_variable = "DEADBOLT_PASSWORD";

/// Puts the password from --password-file or $DEADBOLT_PASSWORD into o.url. On failure (unreadable
/// or empty file, a URL that does not parse) returns false with a one-line reason.
bool apply_password(options& o, std::string& error);

/// What COMMAND's environment loses ("NAME") and gets instead ("NAME=value").
struct environment_change {
  std::vector<std::string> removed;
  std::vector<std::string> added;
};
environment_change command_environment();

}  // namespace deadbolt::cli
