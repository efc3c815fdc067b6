// deadbolt: run a command under a distributed lock, show a lock, force-unlock it.
#include <csignal>
#include <cstdio>
#include <string>
#include <vector>

#include "commands.hpp"
#include "deadbolt/version.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

int main(int argc, char** argv) {
  using namespace deadbolt::cli;
  std::signal(SIGPIPE, SIG_IGN);
  const std::vector<std::string> args(argv + 1, argv + argc);
  std::string error;
  const auto o = parse_options(args, error);
  if (!o) {
    std::fprintf(stderr, "deadbolt: %s\n\n%.*s", error.c_str(), static_cast<int>(usage().size()), usage().data());
    return exit_usage;
  }
  switch (o->command) {
    case subcommand::run: return run_command(*o);
    case subcommand::status: return status_command(*o);
    case subcommand::unlock: return unlock_command(*o);
    case subcommand::version: std::printf("deadbolt %s\n", deadbolt::version()); return exit_ok;
    case subcommand::help: break;
  }
  std::printf("%.*s", static_cast<int>(usage().size()), usage().data());
  return exit_ok;
}
