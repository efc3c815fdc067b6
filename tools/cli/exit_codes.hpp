// The CLI's documented exit codes. `run` otherwise exits with COMMAND's own status
// (128 + N when COMMAND was killed by signal N).
#pragma once

namespace deadbolt::cli {

enum exit_code : int {
  exit_ok = 0,
  exit_usage = 2,           ///< bad arguments
  exit_cannot_connect = 3,  ///< the server cannot be reached (or refused the login)
  exit_wait_timed_out = 4,  ///< --wait ran out before the lock was acquired
  exit_lease_lost = 5,      ///< the lock was lost while COMMAND ran; COMMAND was terminated
  exit_failure = 1,         ///< any other error (printed)
};

}  // namespace deadbolt::cli
