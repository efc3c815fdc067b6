// deadbolt: run a command under a distributed lock, show a lock, force-unlock it, check the server.
#include <csignal>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "deadbolt/version.hpp"
#include "exit_codes.hpp"
#include "options.hpp"
#include "secrets.hpp"
#include "usage.hpp"
#include "verbose_log.hpp"

namespace {

// One line with the reason, one with where to look: never the whole usage text.
int usage_error(const std::string& error, std::optional<deadbolt::cli::subcommand> in) {
  std::fprintf(stderr, "deadbolt: %s\n", error.c_str());
  if (in && *in != deadbolt::cli::subcommand::help && *in != deadbolt::cli::subcommand::version) {
    std::fprintf(stderr, "try 'deadbolt %s --help'\n", deadbolt::cli::name_of(*in));
  } else {
    std::fprintf(stderr, "try 'deadbolt --help'\n");
  }
  return deadbolt::cli::exit_usage;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace deadbolt::cli;
  std::signal(SIGPIPE, SIG_IGN);
  std::string error;
  std::optional<subcommand> failed_in;
  auto o = parse_options(argc, argv, error, failed_in);
  if (!o) return usage_error(error, failed_in);
  if (o->verbose) enable_verbose();
  switch (o->command) {
    case subcommand::help: {
      const auto text = usage(o->help_for);
      std::printf("%.*s", static_cast<int>(text.size()), text.data());
      return exit_ok;
    }
    case subcommand::version: std::printf("deadbolt %s\n", deadbolt::version()); return exit_ok;
    default: break;
  }
  if (o->command == subcommand::acl) return acl_command(*o);  // prints a rule: no server, no password
  if (!apply_password(*o, error)) {
    std::fprintf(stderr, "deadbolt: %s\n", error.c_str());
    return exit_usage;
  }
  switch (o->command) {
    case subcommand::run: return run_command(*o);
    case subcommand::status: return status_command(*o);
    case subcommand::list: return list_command(*o);
    case subcommand::unlock: return unlock_command(*o);
    case subcommand::ping: return ping_command(*o);
    default: return exit_failure;
  }
}
