// The CLI's subcommands. Each returns the process exit code (exit_codes.hpp).
#pragma once

#include "options.hpp"

namespace deadbolt::cli {

int run_command(const options& o);
int status_command(const options& o);
int list_command(const options& o);
int unlock_command(const options& o);
int ping_command(const options& o);
int acl_command(const options& o);

}  // namespace deadbolt::cli
