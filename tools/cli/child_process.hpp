// COMMAND and its whole process tree, run under a guardian process (guardian.hpp) that binds the tree
// to deadbolt's life: nothing of it outlives deadbolt, however deadbolt ends.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/port/asio.hpp"
#include "guardian.hpp"

namespace deadbolt::cli {

class child_process {
 public:
  /// What happened to COMMAND: it stopped (job control: deadbolt should stop too), or it ended and
  /// nothing of its tree runs any more (`status` as shells report it, `left_behind` processes it
  /// left running were stopped), or the guardian died (OOM killer) and deadbolt killed the tree itself;
  /// or, at the start, that the kernel refused the guardian a child subreaper (process_tree.hpp).
  struct event {
    enum kind { stopped, ended, guardian_lost, no_subreaper } what;
    int value = 0;         ///< stopped: the signal; ended: the exit status (128 + N for signal N); no_subreaper: errno
    int left_behind = 0;   ///< ended: how many processes COMMAND left running had to be stopped
  };

  explicit child_process(asio::io_context& io);
  ~child_process();  // closes the guardian's socket: whatever still runs of the tree is killed
  child_process(const child_process&) = delete;
  child_process& operator=(const child_process&) = delete;

  /// Starts argv[0] (searched in PATH) with the current environment without the variables named in
  /// `removed_env`, plus `extra_env` ("NAME=value", replacing a variable of that name), in a process
  /// group of its own; it becomes the terminal's foreground group when deadbolt's is. `grace`: how
  /// long processes COMMAND leaves behind, or a stopped tree, get between SIGTERM and SIGKILL.
  /// Events go to `on_event` from the io_context.
  std::error_code spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                        const std::vector<std::string>& removed_env, std::chrono::milliseconds grace,
                        std::function<void(event)> on_event);
  bool running() const { return guardian_ > 0 && !ended_; }
  /// Sends `signal` to COMMAND's process group.
  void send(int signal);
  /// SIGTERM to every process of the tree, SIGKILL to what is left after `kill_after` (negative: the
  /// grace given to spawn()). Called again, it may only bring the SIGKILL forward.
  void stop_tree(std::chrono::milliseconds kill_after = std::chrono::milliseconds(-1));
  /// Whether COMMAND's group has the terminal (a Ctrl-C at it reached COMMAND, not deadbolt).
  bool has_terminal() const { return terminal_ >= 0 && handed_terminal_; }
  /// deadbolt after a stop: gives COMMAND the terminal back if deadbolt is in the foreground, and
  /// continues COMMAND's group.
  void resume();
  /// Takes the terminal back from COMMAND's group (before deadbolt stops or exits).
  void take_terminal_back();

 private:
  void read_events();
  void on_sigchld();
  void tell(guardian::message::kind what, int value = 0);

  asio::posix::stream_descriptor control_;
  asio::signal_set sigchld_;
  guardian::message incoming_{};
  std::function<void(event)> on_event_;
  pid_t guardian_ = -1;
  pid_t command_ = -1;
  int terminal_ = -1;  // /dev/tty when deadbolt was in its foreground
  bool handed_terminal_ = false;
  bool ended_ = false;
};

}  // namespace deadbolt::cli
