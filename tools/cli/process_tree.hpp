// The processes below a given one (its children, theirs, ...), found in /proc, and signals to all of
// them: how `deadbolt run` ends COMMAND's whole tree, workers that left COMMAND's process group
// (setsid) included. Orphans stay in the tree because their ancestor is a child subreaper
// (PR_SET_CHILD_SUBREAPER): the kernel reparents them to it rather than to init.
//
// Everything here is async-signal-safe (raw system calls, no allocation): the guardian calls it in a
// process forked from a possibly multi-threaded deadbolt.
#pragma once

#include <sys/types.h>

namespace deadbolt::cli {

/// Sends `signal` to every live (not zombie) process below `root`, and SIGCONT after it unless it is
/// 0 (only counting), SIGKILL or SIGCONT (a stopped process acts on a SIGTERM only once continued); returns how many it
/// signalled (0: the tree is empty). -1 if /proc cannot be read.
int signal_descendants(pid_t root, int signal);

/// SIGKILLs everything below `root` until nothing is left (a process forking meanwhile is caught on
/// the next pass). Their zombies are left to reap_children().
void kill_descendants(pid_t root);

/// Collects the caller's ended children (orphans reparented to it included) without waiting; returns
/// the status of `watched` through `status` and true if it was one of them.
bool reap_children(pid_t watched, int& status);

}  // namespace deadbolt::cli
