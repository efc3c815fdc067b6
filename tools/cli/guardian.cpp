#include "guardian.hpp"

#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <ctime>
#include <initializer_list>

#include "process_tree.hpp"

namespace deadbolt::cli::guardian {
namespace {

std::int64_t monotonic_ms() {
  timespec t{};
  ::clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<std::int64_t>(t.tv_sec) * 1000 + t.tv_nsec / 1000000;
}

void tell(int control, message::kind what, int value, int extra = 0) {
  const message m{what, value, extra};
  ssize_t r;
  do {
    r = ::write(control, &m, sizeof m);
  } while (r < 0 && errno == EINTR);
}

void set_disposition(int signal, void (*handler)(int)) {
  struct sigaction a {};
  a.sa_handler = handler;
  sigemptyset(&a.sa_mask);
  ::sigaction(signal, &a, nullptr);
}

void on_child(int) {}  // only to interrupt ppoll()

// Closes every descriptor but `keep`: the guardian must not hold deadbolt's server connection, nor
// keep a pipe on standard output open after COMMAND's tree is gone.
void close_all_but(int keep) {
  if (keep > 0) ::syscall(SYS_close_range, 0u, static_cast<unsigned>(keep - 1), 0u);
  ::syscall(SYS_close_range, static_cast<unsigned>(keep + 1), ~0u, 0u);
}

// In the grandchild: COMMAND's own process group, the terminal if deadbolt had it, default signal
// handling, then exec; exec's errno goes to `report` (closed on exec when it succeeds).
[[noreturn]] void exec_command(const command& c, int report) {
  ::setpgid(0, 0);
  if (c.terminal >= 0) ::tcsetpgrp(c.terminal, ::getpid());  // SIGTTOU is ignored here
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
  sigset_t none;
  sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  ::execvpe(c.argv[0], c.argv, c.envp);
  const int err = errno;
  ssize_t ignored = ::write(report, &err, sizeof err);
  (void)ignored;
  ::_exit(127);
}

}  // namespace

void serve(int control, const command& c) {
  const pid_t self = ::getpid();
  // Orphans of the tree come to us, not to init: they stay findable, and killable.
  const int subreaper_error = ::prctl(PR_SET_CHILD_SUBREAPER, 1) == 0 ? 0 : errno;
  // Signals meant for deadbolt's process group (a terminal's, a supervisor's) are deadbolt's to pass
  // on: the guardian must outlive them.
  for (int s : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGTSTP, SIGTTIN, SIGTTOU, SIGPIPE, SIGUSR1, SIGUSR2}) {
    set_disposition(s, SIG_IGN);
  }
  set_disposition(SIGCHLD, on_child);
  sigset_t chld, unblocked;
  sigemptyset(&chld);
  sigaddset(&chld, SIGCHLD);
  ::sigprocmask(SIG_BLOCK, &chld, &unblocked);
  sigdelset(&unblocked, SIGCHLD);

  int report[2];
  if (::pipe2(report, O_CLOEXEC) != 0) {
    tell(control, message::exec_failed, errno);
    ::_exit(1);
  }
  const pid_t child = ::fork();
  if (child < 0) {
    tell(control, message::exec_failed, errno);
    ::_exit(1);
  }
  if (child == 0) {
    ::close(report[0]);
    ::close(control);
    exec_command(c, report[1]);
  }
  ::setpgid(child, child);  // as shells do, in both: whichever runs first
  ::close(report[1]);
  int err = 0;
  ssize_t got;
  do {
    got = ::read(report[0], &err, sizeof err);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof err)) {
    int ignored = 0;
    ::waitpid(child, &ignored, 0);
    tell(control, message::exec_failed, err);
    ::_exit(1);
  }
  tell(control, message::started, child);
  if (subreaper_error != 0) tell(control, message::no_subreaper, subreaper_error);
  close_all_but(control);

  bool command_running = true;
  int command_status = 0;
  int left_behind = 0;          // processes still running when COMMAND ended
  bool terminated = false;      // the tree had its SIGTERM
  std::int64_t kill_at = -1;    // when SIGKILL follows it
  bool told_ended = false;
  // SIGTERM to every process of the tree, once; SIGKILL to what is left after `kill_after_ms` (the
  // grace by default). A later call may bring the SIGKILL forward (the lease's deadline), never back.
  auto stop_tree = [&](std::int64_t kill_after_ms) {
    const std::int64_t at = monotonic_ms() + (kill_after_ms < 0 ? c.grace.count() : kill_after_ms);
    if (kill_at < 0 || at < kill_at) kill_at = at;
    if (terminated) return signal_tree(self, child, 0);
    terminated = true;
    return signal_tree(self, child, SIGTERM);
  };

  for (;;) {
    // COMMAND stopped (a terminal's Ctrl-Z, SIGTTIN) or ended.
    int s = 0;
    if (command_running) {
      const pid_t r = ::waitpid(child, &s, WNOHANG | WUNTRACED);
      if (r == child && WIFSTOPPED(s)) tell(control, message::stopped, WSTOPSIG(s));
      if (r == child && !WIFSTOPPED(s)) {
        command_running = false;
        command_status = s;
        left_behind = stop_tree(-1);
        if (left_behind < 0) left_behind = 0;
      }
    }
    if (reap_children(child, s) && command_running) {
      command_running = false;
      command_status = s;
      left_behind = stop_tree(-1);
      if (left_behind < 0) left_behind = 0;
    }
    if (kill_at >= 0 && monotonic_ms() >= kill_at) kill_tree(self, child);
    // Done once COMMAND has ended and nothing of its tree runs any more.
    if (!command_running && !told_ended && signal_tree(self, child, 0) <= 0) {
      tell(control, message::ended, command_status, left_behind);
      told_ended = true;
      kill_at = -1;
    }

    pollfd p{control, POLLIN, 0};
    // While a tree is being stopped, look again every 20 ms: a worker's own parent may reap it, which
    // tells us nothing.
    const bool stopping = !told_ended && (!command_running || kill_at >= 0);
    // A SIGKILL due sooner (the lease's deadline) is sent on time, not up to a tick late.
    const std::int64_t until_kill = kill_at >= 0 ? kill_at - monotonic_ms() : 0;
    const std::int64_t tick_ms = until_kill > 0 ? std::min<std::int64_t>(20, until_kill) : 20;
    timespec tick{0, static_cast<long>(tick_ms) * 1000 * 1000};
    const int ready = ::ppoll(&p, 1, stopping ? &tick : nullptr, &unblocked);
    if (ready <= 0) continue;  // a child changed state, or the tick
    message m;
    const ssize_t n = ::read(control, &m, sizeof m);
    if (n < 0 && errno == EINTR) continue;
    if (n != static_cast<ssize_t>(sizeof m)) {
      // deadbolt closed its end: it is done, or it died and nobody renews the lock. Nothing of the
      // tree may outlive it.
      kill_tree(self, child);
      ::_exit(0);
    }
    switch (m.what) {
      case message::forward:
        if (command_running) ::kill(-child, m.value);
        break;
      case message::stop_tree: stop_tree(m.value); break;
      case message::resume:
        if (command_running) ::kill(-child, SIGCONT);
        break;
      default: break;
    }
  }
}

}  // namespace deadbolt::cli::guardian
