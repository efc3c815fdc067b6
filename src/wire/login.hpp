// The login dialogue of a fresh connection: which commands it sends and what their error replies mean.
// Plain functions, used by the session state machine (src/wire/session_fsm.hpp).
#pragma once

#include <array>
#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/encoder.hpp"

namespace deadbolt::detail {

struct login_settings {
  std::string user;      ///< empty: "default"
  std::string password;  ///< empty: no authentication
  std::string client_name;
  int database = 0;      ///< SELECTed when not 0
  /// Sentinel named this server as the master: ROLE must say so (else errc::not_master).
  bool require_master = false;
  /// Replica sync: ROLE tells how many replicas the server has.
  bool count_replicas = false;
};

enum class login_step { hello, auth, setname, select, role };

/// The step's command, for log lines: "HELLO", "AUTH", "CLIENT SETNAME", "SELECT", "ROLE".
const char* command_of(login_step step) noexcept;

/// At most five steps: HELLO 3 (with AUTH and SETNAME in it), or for a server without HELLO (before
/// Redis 6, RESP2 only) AUTH when there is a password and CLIENT SETNAME; then SELECT for a database
/// other than 0; then ROLE when the server must be a master or its replicas are counted.
struct login_plan {
  std::array<login_step, 5> steps{};
  std::size_t size = 0;
};
login_plan plan_login(const login_settings& s, bool resp2_only);

/// Writes the command of `step`.
void encode_login_command(login_step step, const login_settings& s, resp::encoder& e);

/// What an error reply to HELLO or AUTH means (server_error_code): auth_failed (wrong or missing
/// password), permission_denied (NOPERM), server_error (anything else), ...
std::error_code classify_login_error(std::string_view error_text);

/// What ROLE's first element says a master answers.
bool is_master_role(std::string_view role);

/// The error reply of a server that has no HELLO (or refuses RESP3).
bool is_unknown_hello(std::string_view error_text);

/// A login failure that the next attempt will meet again (until the server is reconfigured).
bool is_permanent_login_failure(std::error_code ec);

}  // namespace deadbolt::detail
