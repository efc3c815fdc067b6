#include "child_process.hpp"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>
#if defined(__linux__)
#include <sys/prctl.h>
#endif

#include <cerrno>
#include <csignal>
#include <cstring>

extern char** environ;

namespace deadbolt::cli {

std::error_code child_process::spawn(const std::vector<std::string>& argv, const std::vector<std::string>& extra_env,
                                     const std::vector<std::string>& removed_env) {
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

  // Made before fork: the child only calls async-signal-safe functions until exec.
  sigset_t none;
  sigemptyset(&none);
  const pid_t parent = ::getpid();
  int report[2];  // the child writes errno here if exec fails; close-on-exec closes it on success
  if (::pipe2(report, O_CLOEXEC) != 0) return {errno, std::generic_category()};
  pid_ = ::fork();
  if (pid_ < 0) {
    const int err = errno;
    ::close(report[0]);
    ::close(report[1]);
    return {err, std::generic_category()};
  }
  if (pid_ == 0) {
    ::close(report[0]);
#if defined(__linux__)
    // COMMAND must not outlive us holding a lock nobody renews: the kernel kills it when we die
    // (SIGKILL included). If we died before this call, the check below catches it.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
#endif
    // Default dispositions and an empty mask, whatever deadbolt set up.
    struct sigaction dfl {};
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; ++sig) ::sigaction(sig, &dfl, nullptr);
    ::sigprocmask(SIG_SETMASK, &none, nullptr);
    ::execvpe(args[0], args.data(), env.data());
    const int err = errno;
    ssize_t ignored = ::write(report[1], &err, sizeof err);
    (void)ignored;
    ::_exit(127);
  }
  ::close(report[1]);
  int err = 0;
  ssize_t got;
  do {
    got = ::read(report[0], &err, sizeof err);
  } while (got < 0 && errno == EINTR);
  ::close(report[0]);
  if (got == static_cast<ssize_t>(sizeof err)) {  // exec failed: collect the child
    int status = 0;
    ::waitpid(pid_, &status, 0);
    pid_ = -1;
    return {err, std::generic_category()};
  }
  return {};
}

void child_process::send(int signal) const {
  if (running()) ::kill(pid_, signal);
}

bool child_process::reap() {
  if (pid_ <= 0) return true;
  if (exited_) return true;
  int status = 0;
  const pid_t r = ::waitpid(pid_, &status, WNOHANG);
  if (r != pid_) return false;
  exited_ = true;
  status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return true;
}

}  // namespace deadbolt::cli
