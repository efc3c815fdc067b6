// SIGINT, SIGTERM, SIGHUP (and SIGCONT) for `deadbolt run`, each with where it came from: the kernel
// (a terminal's Ctrl-C or hangup, sent to a whole foreground process group) or a process, and which
// one. COMMAND runs in a process group of its own, so a signal sent to deadbolt, or to deadbolt's
// process group, reaches COMMAND only if deadbolt passes it on; the sender tells apart one signal
// delivered twice (timeout(1) signals its child, then its whole group) from two.
#pragma once

#include <cstdint>
#include <system_error>

#include "deadbolt/port/asio.hpp"

namespace deadbolt::cli {

class signal_source {
 public:
  explicit signal_source(asio::io_context& io);
  ~signal_source();  // default dispositions again
  signal_source(const signal_source&) = delete;
  signal_source& operator=(const signal_source&) = delete;

  struct received {
    int signal = 0;
    bool from_kernel = false;  ///< a terminal's (si_code SI_KERNEL)
    int sender = 0;            ///< the sending process (si_pid), 0 for the kernel
  };
  /// `done(ec, received)`.
  template <typename Done>
  void async_wait(Done done) {
    asio::async_read(pipe_, asio::buffer(&message_, sizeof message_), [this, done = std::move(done)](std::error_code ec, std::size_t) mutable {
      done(ec, received{message_.signal, message_.from_kernel != 0, message_.sender});
    });
  }
  void cancel();

 private:
  asio::posix::stream_descriptor pipe_;
  struct message {  // what the handler writes: 12 bytes, atomic on a pipe
    std::int32_t signal;
    std::int32_t from_kernel;
    std::int32_t sender;
  } message_{};
};

}  // namespace deadbolt::cli
