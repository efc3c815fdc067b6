#include "secrets.hpp"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "deadbolt/config.hpp"
#include "deadbolt/url.hpp"

namespace deadbolt::cli {
namespace {

constexpr std::size_t longest_password = 4096;

// The file's first line: the password, without its line end.
bool read_password_file(const std::string& path, std::string& password, std::string& error) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) {
    error = "--password-file: cannot read '" + path + "': " + std::strerror(errno);
    return false;
  }
  char buf[longest_password + 2];
  const std::size_t got = std::fread(buf, 1, sizeof buf, f);
  const bool failed = std::ferror(f) != 0;
  std::fclose(f);
  if (failed) {
    error = "--password-file: cannot read '" + path + "'";
    return false;
  }
  password.assign(buf, got);
  password = password.substr(0, password.find('\n'));
  if (!password.empty() && password.back() == '\r') password.pop_back();
  if (got > longest_password) error = "--password-file: '" + path + "' is longer than a password (4096 bytes)";
  else if (password.empty()) error = "--password-file: '" + path + "' is empty";
  return error.empty();
}

}  // namespace

bool apply_password(options& o, std::string& error) {
  std::string password;
  if (!o.password_file.empty()) {
    if (!read_password_file(o.password_file, password, error)) return false;
  } else if (const char* env = std::getenv(password_variable); env != nullptr && *env != '\0') {
    password = env;
  } else {
    return true;  // the URL's own, if any
  }
  deadbolt::endpoint ep;
  if (deadbolt::parse_url(o.url, ep)) {
    error = "invalid server URL '" + deadbolt::redacted_url(o.url) + "': " + deadbolt::why_invalid_url(o.url);
    return false;
  }
  o.url = deadbolt::url_with_password(o.url, password);
  return true;
}

environment_change command_environment() {
  environment_change change;
  change.removed.push_back(password_variable);
  if (const char* url = std::getenv("REDIS_URL"); url != nullptr) {
    const std::string clean = deadbolt::url_without_password(url);
    if (clean != url) change.added.push_back("REDIS_URL=" + clean);
  }
  return change;
}

}  // namespace deadbolt::cli
