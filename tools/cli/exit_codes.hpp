// The CLI's exit codes, the same in every subcommand (the table in docs/cli.md and --help). `run`
// otherwise exits with COMMAND's own status (128 + N when COMMAND was killed by signal N).
#pragma once

namespace deadbolt::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_failure = 1,         ///< any other error (printed)
  exit_not_held = 1,        ///< status: NAME is not held (0: it is)
  exit_usage = 2,           ///< bad arguments, server URL or password file
  exit_cannot_connect = 3,  ///< the server cannot be reached, does not answer, or refused the login
  exit_wait_timed_out = 4,  ///< run: the lock was not had in time (-E changes it)
  exit_lease_lost = 5,      ///< run: the lock was lost while COMMAND ran; COMMAND was terminated
  exit_release_failed = 6,  ///< run: the server refused the release (the reason is printed)
  exit_command_not_executable = 126,  ///< run: COMMAND was found but could not be run (as shells)
  exit_command_not_found = 127,       ///< run: there is no such COMMAND (as shells)
};

}  // namespace deadbolt::cli
