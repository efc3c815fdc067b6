// COMMAND's process tree, found in /proc, and signals to all of it: how `deadbolt run` ends the whole
// tree, workers that left COMMAND's process group (setsid) included. The tree is every process
//   - below `root` (its children, theirs, ...): orphans stay there because `root` is a child subreaper
//     (PR_SET_CHILD_SUBREAPER), to which the kernel reparents them rather than to init;
//   - in COMMAND's process group `group`, wherever its parent is;
//   - seen in either by an earlier call and still the same process (its pid and start time): where
//     the subreaper is refused (qemu-user says EINVAL), a worker that left the group is still found
//     once it has been seen, after its parent ended.
//
// Everything here is async-signal-safe (raw system calls, no allocation): the guardian calls it in a
// process forked from a possibly multi-threaded deadbolt.
#pragma once

#include <sys/types.h>

namespace deadbolt::cli {

/// Sends `signal` to every live (not zombie) process of the tree, and SIGCONT after it unless it is 0
/// (only counting), SIGKILL or SIGCONT (a stopped process acts on a SIGTERM only once continued);
/// returns how many (0: the tree is empty). -1 if /proc cannot be read.
int signal_tree(pid_t root, pid_t group, int signal);

/// SIGKILLs the tree until nothing of it is left (a process forking meanwhile is caught on the next
/// pass). Their zombies are left to reap_children().
void kill_tree(pid_t root, pid_t group);

/// Collects the caller's ended children (orphans reparented to it included) without waiting; returns
/// the status of `watched` through `status` and true if it was one of them.
bool reap_children(pid_t watched, int& status);

}  // namespace deadbolt::cli
