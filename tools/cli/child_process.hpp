// COMMAND, run as a child process.
#pragma once

#include <string>
#include <sys/types.h>
#include <system_error>
#include <vector>

namespace deadbolt::cli {

class child_process {
 public:
  /// Starts argv[0] (searched in PATH) with the current environment without the variables named in
  /// `removed_env`, plus `extra_env` ("NAME=value", replacing a variable of that name), in our process group. On Linux it is SIGKILLed if we die first (PR_SET_PDEATHSIG): a COMMAND
  /// must not go on after its lock is no longer renewed.
  std::error_code spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                        const std::vector<std::string>& removed_env);
  bool running() const { return pid_ > 0 && !exited_; }
  void send(int signal) const;
  /// Collects the child if it has ended; returns true once it has.
  bool reap();
  /// Its exit code, or 128 + N if signal N ended it (as shells report).
  int exit_status() const { return status_; }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  int status_ = 0;
};

}  // namespace deadbolt::cli
