// SIGINT, SIGTERM and SIGHUP for `deadbolt run`, each with where it came from. The kernel sends a
// terminal's Ctrl-C (and a hangup) to the whole foreground process group, COMMAND included: forwarding
// that one too would make one Ctrl-C two SIGINTs. A signal sent to deadbolt alone (kill, a supervisor)
// reaches COMMAND only if we forward it.
#pragma once

#include <system_error>

#include "deadbolt/port/asio.hpp"

namespace deadbolt::cli {

class signal_source {
 public:
  explicit signal_source(asio::io_context& io);
  ~signal_source();  // default dispositions again
  signal_source(const signal_source&) = delete;
  signal_source& operator=(const signal_source&) = delete;

  /// `done(ec, signal, to_group)`: to_group is true when the kernel sent it to our process group.
  template <typename Done>
  void async_wait(Done done) {
    asio::async_read(pipe_, asio::buffer(message_), [this, done = std::move(done)](std::error_code ec, std::size_t) mutable {
      done(ec, static_cast<int>(message_[0]), message_[1] != 0);
    });
  }
  void cancel();

 private:
  asio::posix::stream_descriptor pipe_;
  unsigned char message_[2] = {};
};

}  // namespace deadbolt::cli
