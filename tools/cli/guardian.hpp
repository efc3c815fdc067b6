// The guardian: the process between deadbolt and COMMAND that binds COMMAND's whole process tree to
// the lock, deadbolt's own death included.
//
//   deadbolt (holds the lock; a child subreaper)
//     └─ guardian (a child subreaper, in deadbolt's process group, ignoring job-control signals)
//          └─ COMMAND (its own process group: the terminal's foreground one when deadbolt had it)
//               └─ workers, setsid ones and orphans included (orphans reparent to the guardian)
//
// deadbolt and the guardian talk over a socket pair. When deadbolt dies, whatever killed it (SIGKILL,
// the OOM killer), the guardian reads end-of-file and SIGKILLs the whole tree at once, long before the
// lease deadbolt held can end: a second holder never overlaps any of it. Being the parent, it is
// the one that learns COMMAND's status and stops, and when COMMAND has ended it stops what COMMAND
// left behind (SIGTERM, SIGKILL after the grace) before telling deadbolt, which only then releases.
//
// PR_SET_PDEATHSIG would not do: it reaches only the process that set it, not its children (it is
// cleared in every fork), and a COMMAND cannot be made to set it in its workers.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstdint>

namespace deadbolt::cli::guardian {

/// One message on the socket pair, either way: a fixed size, so each read is whole.
struct message {
  enum kind : std::int32_t {
    // deadbolt -> guardian
    forward = 1,    ///< value: a signal for COMMAND's process group
    stop_tree = 2,  ///< SIGTERM the whole tree, SIGKILL what is left after value ms (-1: the grace)
    resume = 3,     ///< SIGCONT COMMAND's process group (deadbolt was continued)
    // guardian -> deadbolt
    started = 10,     ///< value: COMMAND's pid (its process group id too)
    exec_failed = 11, ///< value: exec's errno
    stopped = 12,     ///< value: the signal that stopped COMMAND
    no_subreaper = 14,  ///< value: PR_SET_CHILD_SUBREAPER's errno (qemu-user refuses it)
    ended = 13,       ///< value: COMMAND's wait status; extra: how many left-behind processes had to be stopped
  };
  std::int32_t what = 0;
  std::int32_t value = 0;
  std::int32_t extra = 0;
};

/// What the guardian starts: everything made before fork, so that it only calls async-signal-safe
/// functions (deadbolt may have threads).
struct command {
  char* const* argv;  ///< argv[0] is searched in PATH
  char* const* envp;
  int terminal;       ///< a descriptor of the controlling terminal to hand COMMAND, or -1
  std::chrono::milliseconds grace;
};

/// Runs in the child of fork(): starts COMMAND, reports `started` or `exec_failed` on `control`, then
/// serves until deadbolt closes its end. Never returns.
[[noreturn]] void serve(int control, const command& c);

}  // namespace deadbolt::cli::guardian
