#include "process_tree.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <ctime>

namespace deadbolt::cli {
namespace {

// The live processes of the tree, at most this many per call (more is a fork bomb: the next call gets
// the rest once these are gone). Nothing is kept of the processes outside the tree: /proc is read
// again on every pass, so the tables stay small whatever the system runs.
constexpr int max_tree = 1024;

struct proc_row {
  pid_t pid;
  pid_t ppid;
  pid_t pgrp;
  unsigned long long start;  // in clock ticks since boot: with the pid, one process for ever
  bool zombie;
};

// The processes of the tree seen so far (remembered across calls).
struct known_process {
  pid_t pid;
  unsigned long long start;
};
known_process known[max_tree];
int known_count = 0;

void remember(const proc_row& row) {
  for (int i = 0; i < known_count; ++i)
    if (known[i].pid == row.pid && known[i].start == row.start) return;
  if (known_count < max_tree) known[known_count++] = {row.pid, row.start};
}

bool is_known(const proc_row& row) {
  for (int i = 0; i < known_count; ++i)
    if (known[i].pid == row.pid && known[i].start == row.start) return true;
  return false;
}

// The next space-separated number of a stat line, advancing p past it.
unsigned long long next_number(const char*& p) {
  while (*p == ' ') ++p;
  unsigned long long n = 0;
  bool negative = *p == '-';
  if (negative) ++p;
  for (; *p >= '0' && *p <= '9'; ++p) n = n * 10 + static_cast<unsigned long long>(*p - '0');
  while (*p != ' ' && *p != '\0') ++p;
  return negative ? 0 : n;
}

// Parses "/proc/PID/stat": "pid (comm) S ppid ..."; comm may hold spaces and parentheses, so the
// fields start after the last ')'.
bool read_stat(const char* name, proc_row& row) {
  char path[64] = "/proc/";
  int n = 6;
  for (const char* c = name; *c != '\0' && n < 50; ++c) path[n++] = *c;
  const char tail[] = "/stat";
  for (const char* c = tail; *c != '\0'; ++c) path[n++] = *c;
  path[n] = '\0';
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char buf[1024];
  const ssize_t got = ::read(fd, buf, sizeof buf - 1);
  ::close(fd);
  if (got <= 0) return false;
  buf[got] = '\0';
  const char* close_paren = nullptr;
  for (const char* c = buf; *c != '\0'; ++c)
    if (*c == ')') close_paren = c;
  if (close_paren == nullptr || close_paren[1] != ' ' || close_paren[2] == '\0') return false;
  const char state = close_paren[2];
  const char* p = close_paren + 3;
  row.ppid = static_cast<pid_t>(next_number(p));  // field 4
  row.pgrp = static_cast<pid_t>(next_number(p));  // 5
  for (int field = 6; field < 22; ++field) next_number(p);
  row.start = next_number(p);  // 22: starttime
  row.zombie = state == 'Z' || state == 'X';
  return true;
}

// The tree found so far in one call.
struct tree_list {
  pid_t pid[max_tree];
  bool zombie[max_tree];
  int count = 0;

  bool has(pid_t p) const {
    for (int i = 0; i < count; ++i)
      if (pid[i] == p) return true;
    return false;
  }
};

// One pass over /proc: adds to tree every process not in it yet that belongs to it (below root or a
// process already in it, in the group, or known). Returns how many it added; -1 if /proc cannot be
// read.
int scan_once(pid_t root, pid_t group, tree_list& tree) {
  const int dir = ::open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0) return -1;
  int added = 0;
  alignas(8) char buf[4096];
  for (;;) {
    const long got = ::syscall(SYS_getdents64, dir, buf, sizeof buf);
    if (got <= 0) break;
    for (long off = 0; off < got;) {
      struct entry {
        ino64_t ino;
        off64_t off;
        unsigned short reclen;
        unsigned char type;
        char name[1];
      };
      const auto* e = reinterpret_cast<const entry*>(buf + off);
      off += e->reclen;
      pid_t pid = 0;
      const char* c = e->name;
      for (; *c >= '0' && *c <= '9'; ++c) pid = pid * 10 + (*c - '0');
      if (*c != '\0' || pid <= 0 || tree.count == max_tree || tree.has(pid)) continue;
      proc_row row{pid, 0, 0, 0, false};
      if (!read_stat(e->name, row)) continue;
      const bool belongs = row.ppid == root || (group > 0 && row.pgrp == group) || is_known(row) ||
                           tree.has(row.ppid);
      if (!belongs) continue;
      tree.pid[tree.count] = pid;
      tree.zombie[tree.count] = row.zombie;
      ++tree.count;
      if (!row.zombie) remember(row);
      ++added;
    }
  }
  ::close(dir);
  return added;
}

}  // namespace

int signal_tree(pid_t root, pid_t group, int signal) {
  tree_list tree;
  // Parents usually have lower pids than their children, so they are listed first and one pass
  // finds most of the tree; a child listed before its parent (pid wrap-around, reparenting) is found
  // by the next pass. Passes go on until one adds nothing.
  for (;;) {
    const int added = scan_once(root, group, tree);
    if (added < 0) return -1;
    if (added == 0 || tree.count == max_tree) break;
  }
  int signalled = 0;
  for (int i = 0; i < tree.count; ++i) {
    if (tree.zombie[i]) continue;
    // (A pid read a moment ago could only be reused after its process was reaped and the kernel
    // went round the whole pid space: not a concern in that moment.)
    if (::kill(tree.pid[i], signal) != 0) continue;
    if (signal != 0 && signal != SIGKILL && signal != SIGCONT) ::kill(tree.pid[i], SIGCONT);
    ++signalled;
  }
  return signalled;
}

void kill_tree(pid_t root, pid_t group) {
  for (;;) {
    const int signalled = signal_tree(root, group, SIGKILL);
    if (signalled <= 0) return;
    const timespec pause{0, 2 * 1000 * 1000};  // time for the killed to exit
    ::nanosleep(&pause, nullptr);
  }
}

bool reap_children(pid_t watched, int& status) {
  bool seen = false;
  for (;;) {
    int s = 0;
    const pid_t pid = ::waitpid(-1, &s, WNOHANG);
    if (pid <= 0) return seen;
    if (pid == watched) {
      status = s;
      seen = true;
    }
  }
}

}  // namespace deadbolt::cli
