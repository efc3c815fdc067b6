#include "wire/login.hpp"

#include "base/server_error.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

login_plan plan_login(const login_settings& s, bool resp2_only) {
  login_plan plan;
  auto add = [&plan](login_step step) { plan.steps[plan.size++] = step; };
  if (!resp2_only) {
    add(login_step::hello);
  } else {
    if (!s.password.empty()) add(login_step::auth);
    add(login_step::setname);
  }
  if (s.database != 0) add(login_step::select);
  if (s.require_master || s.count_replicas) add(login_step::role);
  return plan;
}

void encode_login_command(login_step step, const login_settings& s, resp::encoder& e) {
  switch (step) {
    case login_step::hello:
      if (!s.password.empty()) {
        e.command("HELLO", 3, "AUTH", s.user.empty() ? std::string_view("default") : s.user, s.password,
                  "SETNAME", s.client_name);
      } else {
        e.command("HELLO", 3, "SETNAME", s.client_name);
      }
      return;
    case login_step::auth:
      if (s.user.empty() || s.user == "default") {
        e.command("AUTH", s.password);
      } else {
        e.command("AUTH", s.user, s.password);
      }
      return;
    case login_step::setname: e.command("CLIENT", "SETNAME", s.client_name); return;
    case login_step::select: e.command("SELECT", s.database); return;
    case login_step::role: e.command("ROLE"); return;
  }
}

const char* command_of(login_step step) noexcept {
  switch (step) {
    case login_step::hello: return "HELLO";
    case login_step::auth: return "AUTH";
    case login_step::setname: return "CLIENT SETNAME";
    case login_step::select: return "SELECT";
    case login_step::role: return "ROLE";
  }
  return "?";
}

std::error_code classify_login_error(std::string_view text) { return server_error_code(text); }

bool is_master_role(std::string_view role) { return role == "master"; }

bool is_unknown_hello(std::string_view text) {
  const server_error_kind kind = server_error_kind_of(text);
  return kind == server_error_kind::no_protocol || kind == server_error_kind::unknown_command;
}

bool is_permanent_login_failure(std::error_code ec) {
  return ec == errc::auth_failed || ec == errc::permission_denied || ec == errc::invalid_config;
}

}  // namespace deadbolt::detail
