#include "signal_source.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <csignal>

namespace deadbolt::cli {
namespace {

constexpr int watched[] = {SIGINT, SIGTERM, SIGHUP, SIGCONT};
int write_end = -1;  // the handler's end of the pipe (one signal_source per process)

void on_signal(int signal, siginfo_t* info, void*) {
  const int saved = errno;
  const std::int32_t message[3] = {signal, info != nullptr && info->si_code == SI_KERNEL,
                                   info != nullptr && info->si_code <= 0 ? static_cast<std::int32_t>(info->si_pid) : 0};
  const ssize_t ignored = ::write(write_end, message, sizeof message);  // 12 bytes: atomic on a pipe
  (void)ignored;
  errno = saved;
}

}  // namespace

signal_source::signal_source(asio::io_context& io) : pipe_(io) {
  int fds[2];
  if (::pipe2(fds, O_CLOEXEC | O_NONBLOCK) != 0) return;
  pipe_.assign(fds[0]);
  write_end = fds[1];
  struct sigaction action {};
  action.sa_sigaction = on_signal;
  action.sa_flags = SA_SIGINFO | SA_RESTART;
  sigemptyset(&action.sa_mask);
  for (int s : watched) ::sigaction(s, &action, nullptr);
}

signal_source::~signal_source() {
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  for (int s : watched) ::sigaction(s, &dfl, nullptr);
  if (write_end >= 0) ::close(write_end);
  write_end = -1;
}

void signal_source::cancel() {
  std::error_code ignored;
  pipe_.cancel(ignored);
}

}  // namespace deadbolt::cli
