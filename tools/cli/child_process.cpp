#include "child_process.hpp"

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <limits>

#include "process_tree.hpp"

extern char** environ;

namespace deadbolt::cli {
namespace {

// deadbolt's controlling terminal, if deadbolt's process group is its foreground group: then
// COMMAND's group gets it, as a shell gives it to the job it runs. -1 otherwise.
int foreground_terminal() {
  const int fd = ::open("/dev/tty", O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  if (::tcgetpgrp(fd) == ::getpgrp()) return fd;
  ::close(fd);
  return -1;
}

// tcsetpgrp() from a background group stops the caller with SIGTTOU unless it is blocked.
void set_foreground(int terminal, pid_t group) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::sigprocmask(SIG_BLOCK, &ttou, &old);
  ::tcsetpgrp(terminal, group);
  ::sigprocmask(SIG_SETMASK, &old, nullptr);
}

int shell_status(int wait_status) {
  return WIFEXITED(wait_status) ? WEXITSTATUS(wait_status) : 128 + WTERMSIG(wait_status);
}

}  // namespace

child_process::child_process(asio::io_context& io) : control_(io), sigchld_(io, SIGCHLD) {}

child_process::~child_process() {
  take_terminal_back();
  // The guardian reads end-of-file: it kills whatever still runs of the tree (nothing, normally) and
  // exits.
  std::error_code ignored;
  control_.close(ignored);
  if (guardian_ > 0) {
    int status = 0;
    while (::waitpid(guardian_, &status, 0) < 0 && errno == EINTR) {
    }
  }
  if (terminal_ >= 0) ::close(terminal_);
}

std::error_code child_process::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                                     const std::vector<std::string>& removed_env, std::chrono::milliseconds grace,
                                     std::function<void(event)> on_event) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);

  std::vector<std::string> env_storage;
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string entry(*e);
    bool overridden = false;
    for (const auto& extra : extra_env) {
      const auto eq = extra.find('=');
      if (entry.compare(0, eq + 1, extra, 0, eq + 1) == 0) overridden = true;
    }
    for (const auto& name : removed_env) {
      if (entry.size() > name.size() && entry.compare(0, name.size(), name) == 0 && entry[name.size()] == '=') overridden = true;
    }
    if (!overridden) env_storage.push_back(entry);
  }
  env_storage.insert(env_storage.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> env;
  for (auto& e : env_storage) env.push_back(e.data());
  env.push_back(nullptr);

#if defined(__linux__)
  // If the guardian dies (the OOM killer may pick it), the tree's orphans come to us to be killed.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  terminal_ = foreground_terminal();
  int pair[2];
  if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) != 0) return {errno, std::generic_category()};
  // Made before fork: the guardian only calls async-signal-safe functions.
  const guardian::command command{args.data(), env.data(), terminal_, grace};
  guardian_ = ::fork();
  if (guardian_ < 0) {
    const int err = errno;
    ::close(pair[0]);
    ::close(pair[1]);
    return {err, std::generic_category()};
  }
  if (guardian_ == 0) {
    ::close(pair[0]);
    guardian::serve(pair[1], command);
  }
  ::close(pair[1]);
  guardian::message first;
  ssize_t got;
  do {
    got = ::read(pair[0], &first, sizeof first);
  } while (got < 0 && errno == EINTR);
  if (got != static_cast<ssize_t>(sizeof first) || first.what != guardian::message::started) {
    ::close(pair[0]);
    int status = 0;
    ::waitpid(guardian_, &status, 0);
    guardian_ = -1;
    const int err = got == static_cast<ssize_t>(sizeof first) ? first.value : ECHILD;
    return {err, std::generic_category()};
  }
  command_ = first.value;
  handed_terminal_ = terminal_ >= 0;
  on_event_ = std::move(on_event);
  control_.assign(pair[0]);
  read_events();
  on_sigchld();
  return {};
}

void child_process::read_events() {
  asio::async_read(control_, asio::buffer(&incoming_, sizeof incoming_), [this](std::error_code ec, std::size_t) {
    if (ec) return;  // the guardian is gone: its SIGCHLD tells the rest
    const auto m = incoming_;
    if (m.what == guardian::message::stopped) {
      on_event_({event::stopped, m.value, 0});
    } else if (m.what == guardian::message::no_subreaper) {
      on_event_({event::no_subreaper, m.value, 0});
    } else if (m.what == guardian::message::ended) {
      ended_ = true;
      sigchld_.cancel();  // the guardian exits when we close its socket: the destructor reaps it
      take_terminal_back();
      on_event_({event::ended, shell_status(m.value), m.extra});
      return;
    }
    read_events();
  });
}

// Reaps the guardian if it died before COMMAND's tree ended (the OOM killer, a stray SIGKILL): the
// tree's orphans are ours then, and nothing of it may run on.
void child_process::on_sigchld() {
  sigchld_.async_wait([this](std::error_code ec, int) {
    if (ec) return;
    int status = 0;
    const bool guardian_died = reap_children(guardian_, status);
    if (guardian_died) guardian_ = -1;
    if (guardian_died && !ended_) {
      kill_tree(::getpid(), command_);
      reap_children(-1, status);
      ended_ = true;
      take_terminal_back();
      on_event_({event::guardian_lost, 0, 0});
      return;
    }
    if (guardian_ > 0) on_sigchld();
  });
}

void child_process::tell(guardian::message::kind what, int value) {
  if (!running()) return;
  const guardian::message m{what, value, 0};
  std::error_code ignored;
  asio::write(control_, asio::buffer(&m, sizeof m), ignored);
}

void child_process::send(int signal) { tell(guardian::message::forward, signal); }

void child_process::stop_tree(std::chrono::milliseconds kill_after) {
  const auto ms = std::min<std::int64_t>(kill_after.count(), std::numeric_limits<std::int32_t>::max());
  tell(guardian::message::stop_tree, static_cast<int>(ms < 0 ? -1 : ms));
}

void child_process::resume() {
  if (!running()) return;
  if (terminal_ >= 0 && ::tcgetpgrp(terminal_) == ::getpgrp()) {
    set_foreground(terminal_, command_);
    handed_terminal_ = true;
  }
  tell(guardian::message::resume);
}

void child_process::take_terminal_back() {
  if (!handed_terminal_) return;
  handed_terminal_ = false;
  if (::tcgetpgrp(terminal_) == command_) set_foreground(terminal_, ::getpgrp());
}

}  // namespace deadbolt::cli
