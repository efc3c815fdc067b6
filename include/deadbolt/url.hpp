// Server URLs as text: the reason parse_url() refuses one, and a URL fit to print or to hand on
// (its password hidden, taken out or put in). For logs and tools; nothing here connects.
#pragma once

#include <string>
#include <string_view>

namespace deadbolt {

/// Why parse_url() refuses `url`, in words: "the port '99999' is not a number from 1 to 65535",
/// "unknown scheme 'http' (...)". (For a URL that parses: "it does not parse" is not returned; the
/// text is only meaningful for a refused URL.)
std::string why_invalid_url(std::string_view url);

/// `url` with its password (if any) replaced by "***", for messages; works on malformed URLs too.
std::string redacted_url(std::string_view url);

/// `url` without its password (the user is kept): e.g. what a child process may be given.
std::string url_without_password(std::string_view url);

/// `url` with `password` as its password (percent-encoded), replacing one it had. `url` must parse.
std::string url_with_password(std::string_view url, std::string_view password);

}  // namespace deadbolt
