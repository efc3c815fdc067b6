#include "base/server_error.hpp"

#include <cctype>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

bool starts_with(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }
bool contains(std::string_view s, std::string_view part) { return s.find(part) != std::string_view::npos; }

bool contains_ignoring_case(std::string_view s, std::string_view part) {
  for (std::size_t at = 0; at + part.size() <= s.size(); ++at) {
    std::size_t i = 0;
    while (i < part.size() && std::tolower(static_cast<unsigned char>(s[at + i])) == part[i]) ++i;
    if (i == part.size()) return true;
  }
  return false;
}

void skip_spaces(std::string_view& s) {
  while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

// The error a script raised, out of Redis 6's wrapping: "Error running script (call to f_<sha>):
// @user_script:<line>: <the error>" (an error the script raised itself may carry a second
// "@user_script: <line>: " of its own).
std::string_view unwrapped_script_error(std::string_view message) {
  if (!starts_with(message, "Error running script")) return message;
  const auto at = message.find("@user_script");
  if (at == std::string_view::npos) return message;
  message.remove_prefix(at);
  while (starts_with(message, "@user_script")) {
    message.remove_prefix(12);
    if (!message.empty() && message.front() == ':') message.remove_prefix(1);
    skip_spaces(message);
    while (!message.empty() && std::isdigit(static_cast<unsigned char>(message.front()))) message.remove_prefix(1);
    if (!message.empty() && message.front() == ':') message.remove_prefix(1);
    skip_spaces(message);
  }
  return message;
}

// An ACL refusal of a command a script called, as Redis words it (ERR-coded): 7.0 "The user executing
// the script can't run this command or subcommand" (or "... access at least one of the keys ...",
// "... publish to the channel ...", "... is lacking the permissions ..."), 7.2+ "ACL failure in
// script: User u has no permissions to run the 'publish' command".
bool is_acl_refusal_in_script(std::string_view message) {
  return starts_with(message, "The user executing the script") || starts_with(message, "ACL failure in script");
}

// AUTH refused with ERR (before Redis 6's WRONGPASS, or with no password configured).
bool is_auth_refusal(std::string_view message) {
  return contains(message, "invalid password") || contains(message, "without any password configured") ||
         contains(message, "invalid username-password");
}

server_error_kind kind_of_code(std::string_view code) {
  struct entry {
    std::string_view code;
    server_error_kind kind;
  };
  static constexpr entry codes[] = {
      {"NOSCRIPT", server_error_kind::noscript},     {"NOPROTO", server_error_kind::no_protocol},
      {"MOVED", server_error_kind::moved},           {"ASK", server_error_kind::ask},
      {"TRYAGAIN", server_error_kind::try_again},    {"CLUSTERDOWN", server_error_kind::cluster_down},
      {"READONLY", server_error_kind::read_only},    {"MASTERDOWN", server_error_kind::read_only},
      {"LOADING", server_error_kind::loading},       {"BUSY", server_error_kind::busy},
      {"NOPERM", server_error_kind::no_permission},  {"WRONGPASS", server_error_kind::auth},
      {"NOAUTH", server_error_kind::auth},           {"WRONGTYPE", server_error_kind::wrong_type},
      {"CROSSSLOT", server_error_kind::cross_slot},
  };
  for (const entry& e : codes) {
    if (e.code == code) return e.kind;
  }
  return server_error_kind::other;
}

}  // namespace

server_error_kind server_error_kind_of(std::string_view text) {
  // An error reply is "<CODE> <words>"; the code is the first word.
  for (int depth = 0; depth < 2; ++depth) {  // at most one wrapping (a script's error before Redis 7)
    const auto space = text.find(' ');
    const std::string_view code = text.substr(0, space);
    const std::string_view message = space == std::string_view::npos ? std::string_view() : text.substr(space + 1);
    if (code != "ERR") return kind_of_code(code);
    if (is_acl_refusal_in_script(message)) return server_error_kind::no_permission;
    if (is_auth_refusal(message)) return server_error_kind::auth;
    if (contains_ignoring_case(message, "unknown command") || contains_ignoring_case(message, "unknown subcommand")) {
      return server_error_kind::unknown_command;
    }
    const std::string_view inner = unwrapped_script_error(message);
    if (inner == message) return server_error_kind::other;
    if (is_acl_refusal_in_script(inner)) return server_error_kind::no_permission;
    text = inner;  // the script's error, with its own code
  }
  return server_error_kind::other;
}

std::error_code server_error_code(server_error_kind kind) {
  switch (kind) {
    case server_error_kind::moved:
    case server_error_kind::ask: return errc::needs_cluster_url;
    case server_error_kind::try_again:
    case server_error_kind::cluster_down: return errc::cluster_down;
    case server_error_kind::read_only: return errc::not_master;
    case server_error_kind::loading:
    case server_error_kind::busy: return errc::server_busy;
    case server_error_kind::no_permission: return errc::permission_denied;
    case server_error_kind::auth: return errc::auth_failed;
    case server_error_kind::wrong_type: return errc::wrong_type;
    case server_error_kind::cross_slot: return errc::cross_slot;
    case server_error_kind::other:
    case server_error_kind::noscript:
    case server_error_kind::unknown_command:
    case server_error_kind::no_protocol: break;
  }
  return errc::server_error;
}

std::error_code server_error_code(std::string_view text) { return server_error_code(server_error_kind_of(text)); }

}  // namespace deadbolt::detail
