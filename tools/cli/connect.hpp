// What every subcommand does first: build the client from the options, connect within a deadline,
// and, when something fails, say why and pick the exit code, the same way in every subcommand.
#pragma once

#include <chrono>
#include <string>
#include <system_error>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/asio.hpp"
#include "exit_codes.hpp"
#include "options.hpp"

namespace deadbolt::cli {

deadbolt::config make_config(const options& o);

/// "127.0.0.1:6379" or the socket path, for messages (never a password).
std::string where(const options& o);

/// Prints why `ec` stopped us ("cannot connect to ...", "invalid server URL ...: <reason>") and
/// returns the exit code: 2 for a bad URL, 3 when the server cannot be reached, does not answer or
/// refuses the login, 1 otherwise. `doing` says what failed when it was not the connection.
int report_error(const options& o, std::error_code ec, const std::string& doing);

/// Connects `client`; calls `ready(0)` once connected, or `ready(exit code)` after reporting why not,
/// at the latest after `bound` (at most --connect-timeout, which make_config gives the client).
class connector {
 public:
  connector(asio::io_context& io, deadbolt::client& client, const options& o) : timer_(io), client_(client), o_(o) {}

  template <typename Ready>
  void start(std::chrono::milliseconds bound, Ready ready) {
    if (auto ec = client_.config_error()) return ready(report_error(o_, ec, ""));
    started_ = std::chrono::steady_clock::now();
    connecting();
    // Within --connect-timeout the client gives up by itself, with the reason; a shorter bound (a
    // shorter --wait) needs a timer of our own.
    if (bound < o_.connect_timeout) {
      timer_.expires_after(bound);
      timer_.async_wait([this, bound, ready](std::error_code ec) {
        if (ec || done_) return;
        done_ = true;
        ready(gave_up(bound));
      });
    }
    client_.async_connect([this, ready](std::error_code ec) {
      if (done_) return;
      done_ = true;
      timer_.cancel();
      if (ec) return ready(report_error(o_, ec, ""));
      connected();
      ready(0);
    });
  }

 private:
  void connecting();
  void connected();
  int gave_up(std::chrono::milliseconds bound);

  asio::steady_timer timer_;
  deadbolt::client& client_;
  const options& o_;
  std::chrono::steady_clock::time_point started_;
  bool done_ = false;
};

/// What a one-shot subcommand (status, unlock, list) runs on: its own event loop and client, connected
/// within --connect-timeout. run(work) calls work() once connected and returns when the client has
/// been shut down by finish(code), with that code (or with the connection's exit code).
class one_shot {
 public:
  explicit one_shot(const options& o) : client(io.get_executor(), make_config(o)), o_(o), connector_(io, client, o) {}

  template <typename Work>
  int run(Work work) {
    connector_.start(o_.connect_timeout, [this, work](int code) {
      if (code != 0) return finish(code);
      work();
    });
    io.run();
    return code_;
  }

  /// Ends the command with `code`: the client shuts down, and run() returns once it has.
  void finish(int code) {
    code_ = code;
    client.shutdown();
  }

  asio::io_context io;
  deadbolt::client client;

 private:
  const options& o_;
  connector connector_;
  int code_ = exit_failure;
};

}  // namespace deadbolt::cli
