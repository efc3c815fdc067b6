// The server URL as the CLI shows and handles it: passwords redacted in every message, the reason a
// URL is refused, and the password put in or taken out.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt::cli {

/// `url` with its password (if any) replaced by "***"; works on malformed URLs too.
std::string redacted(std::string_view url);

/// Why deadbolt::parse_url refuses `url`, in words ("the port '99999' is not 1..65535").
std::string why_invalid(std::string_view url);

/// `url` without its password (the user is kept): what COMMAND gets as REDIS_URL.
std::string without_password(std::string_view url);

/// `url` with `password` as its password (percent-encoded), replacing one it had. `url` must parse.
std::string with_password(std::string_view url, std::string_view password);

}  // namespace deadbolt::cli
