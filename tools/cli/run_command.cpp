// deadbolt run: wait for the lock, run COMMAND under it, release it when COMMAND ends.
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <optional>
#include <string>

#include "child_process.hpp"
#include "client_setup.hpp"
#include "commands.hpp"
#include "signal_source.hpp"
#include "status_line.hpp"

namespace deadbolt::cli {
namespace {

using std::chrono::milliseconds;
using clock = std::chrono::steady_clock;

class runner {
 public:
  explicit runner(const options& o)
      : o_(o),
        client_(io_.get_executor(), make_config(o)),
        lock_(client_.lock(o.name)),
        fenced_(client_.fenced_lock(o.name)),
        fair_(client_.fair_lock(o.name)),
        rw_(client_.read_write_lock(o.name)),
        semaphore_(client_.expirable_semaphore(o.name)),
        signals_(io_),
        children_(io_, SIGCHLD),
        status_timer_(io_),
        lease_timer_(io_),
        renew_timer_(io_),
        kill_timer_(io_),
        owner_(static_cast<deadbolt::owner_id>(::getpid())) {}

  int run() {
    if (auto ec = client_.config_error()) return report_connect_error(o_, ec);
    client_.async_connect([this](std::error_code ec) {
      if (finished_) return;  // interrupted while connecting
      if (ec) return finish(report_connect_error(o_, ec));
      acquire();
    });
    watch_signals();
    io_.run();
    return exit_code_;
  }

 private:
  void acquire() {
    waiting_ = true;
    started_waiting_ = clock::now();
    if (!o_.quiet && ::isatty(STDERR_FILENO)) show_status();
    auto acquired = [this](std::error_code ec, std::optional<std::uint64_t> token) { on_acquired(ec, token); };
    const milliseconds wait = o_.wait ? *o_.wait : milliseconds(-1);
    if (o_.mode == lock_mode::semaphore) return take_permit(wait, acquired);
    if (o_.mode == lock_mode::fenced) {
      fenced_.async_try_lock(owner_, wait, o_.lease, asio::bind_cancellation_slot(cancel_wait_.slot(), acquired));
      return;
    }
    with_lock([&](auto& lock) {
      lock.async_try_lock(owner_, wait, o_.lease,
                          asio::bind_cancellation_slot(cancel_wait_.slot(), [acquired](std::error_code ec, bool got) {
                            acquired(ec, got ? std::optional<std::uint64_t>(0) : std::nullopt);
                          }));
    });
  }

  // --semaphore N: creates the semaphore with N permits if it does not exist, then takes one permit
  // with the permit lease (kept alive while COMMAND runs: renew_permit).
  template <typename Acquired>
  void take_permit(milliseconds wait, Acquired acquired) {
    semaphore_.async_try_set_permits(o_.permits, [this, wait, acquired](std::error_code ec, bool) {
      if (ec) return acquired(ec, std::nullopt);
      semaphore_.async_try_acquire(
          wait, permit_lease(),
          asio::bind_cancellation_slot(cancel_wait_.slot(),
                                       [this, acquired](std::error_code aec, std::optional<deadbolt::permit_id> id) {
                                         permit_ = id;
                                         acquired(aec, id ? std::optional<std::uint64_t>(0) : std::nullopt);
                                       }));
    });
  }

  milliseconds permit_lease() const {
    if (o_.lease.count() > 0) return o_.lease;
    return o_.watchdog ? *o_.watchdog : milliseconds(30000);
  }

  // Restarts the permit's lease every third of it; a permit found gone, or not confirmed for a whole
  // lease, is lost.
  void renew_permit(clock::time_point confirmed) {
    renew_timer_.expires_after(permit_lease() / 3);
    renew_timer_.async_wait([this, confirmed](std::error_code ec) {
      if (ec || !permit_ || !child_.running()) return;
      semaphore_.async_update_lease(*permit_, permit_lease(), [this, confirmed](std::error_code uec, bool held) {
        if (!child_.running()) return;
        if (!uec && !held) return lease_lost("the permit expired or was taken away");
        if (uec && clock::now() - confirmed >= permit_lease()) {
          return lease_lost("its lease could not be renewed: " + uec.message());
        }
        renew_permit(uec ? confirmed : clock::now());
      });
    });
  }

  // Calls f with the lock object of the chosen kind (the fenced lock unlocks as the reentrant one).
  template <typename F>
  void with_lock(F&& f) {
    switch (o_.mode) {
      case lock_mode::fair: return f(fair_);
      case lock_mode::read: return f(rw_.read());
      case lock_mode::write: return f(rw_.write());
      default: return f(lock_);
    }
  }

  void show_status() {
    status_timer_.expires_after(milliseconds(250));
    status_timer_.async_wait([this](std::error_code ec) {
      if (ec || acquired_) return;
      client_.async_command({"HGETALL", o_.name}, [this](std::error_code, deadbolt::reply holders) {
        client_.async_command({"PTTL", o_.name}, [this, holders = std::move(holders)](std::error_code, deadbolt::reply ttl) {
          if (acquired_ || finished_) return;
          status_.show(o_.name, holders, ttl.as_int().value_or(-2), clock::now() - started_waiting_);
          show_status();
        });
      });
    });
  }

  void on_acquired(std::error_code ec, std::optional<std::uint64_t> token) {
    status_timer_.cancel();
    status_.clear();
    if (finished_) return;
    if (ec == asio::error::operation_aborted) return finish(128 + interrupted_by_);
    if (ec) {
      std::fprintf(stderr, "deadbolt: cannot take lock %s: %s\n", o_.name.c_str(), ec.message().c_str());
      return finish(ec == deadbolt::errc::not_connected || ec.category() != deadbolt::deadbolt_category()
                        ? exit_cannot_connect
                        : exit_failure);
    }
    if (!token) {
      std::fprintf(stderr, "deadbolt: timed out after %s waiting for lock %s\n", format(*o_.wait).c_str(),
                   o_.name.c_str());
      return finish(exit_wait_timed_out);
    }
    acquired_ = true;
    if (interrupted_by_ != 0) return release(128 + interrupted_by_);  // the signal beat the cancellation
    std::vector<std::string> env{"DEADBOLT_LOCK_NAME=" + o_.name};
    if (o_.mode == lock_mode::fenced) env.push_back("DEADBOLT_FENCING_TOKEN=" + std::to_string(*token));
    if (permit_) env.push_back("DEADBOLT_PERMIT_ID=" + permit_->hex());
    if (auto spawn_error = child_.spawn(o_.argv, env)) {
      std::fprintf(stderr, "deadbolt: cannot run %s: %s\n", o_.argv[0].c_str(), spawn_error.message().c_str());
      return release(127);
    }
    watch_child();
    watch_lease();
  }

  void watch_lease() {
    client_.on_lease_lost([this](std::string_view lost_name, deadbolt::owner_id lost_owner) {
      if (lost_name == o_.name && lost_owner == owner_) lease_lost("it was taken away or expired");
    });
    if (permit_ && o_.lease.count() == 0) renew_permit(clock::now());
    if (o_.lease.count() > 0) {
      // A fixed lease is not renewed: when it runs out, the lock is no longer ours.
      lease_timer_.expires_after(o_.lease);
      lease_timer_.async_wait([this](std::error_code ec) {
        if (!ec) lease_lost("the lease of " + format(o_.lease) + " ran out");
      });
    }
  }

  void lease_lost(const std::string& why) {
    if (lost_ || !child_.running()) return;
    lost_ = true;
    std::fprintf(stderr, "deadbolt: lost lock %s (%s): stopping the command\n", o_.name.c_str(), why.c_str());
    child_.send(SIGTERM);
    kill_timer_.expires_after(o_.grace);
    kill_timer_.async_wait([this](std::error_code ec) {
      if (!ec) child_.send(SIGKILL);
    });
  }

  void watch_signals() {
    signals_.async_wait([this](std::error_code ec, int signal, bool to_group) {
      if (ec || finished_) return;
      if (acquired_) {
        // The command decides; we release when it exits. A Ctrl-C already reached it from the kernel.
        if (!to_group) child_.send(signal);
      } else if (!waiting_) {
        return finish(128 + signal);  // still connecting: nothing to cancel or release
      } else {
        interrupted_by_ = signal;
        // The wait may complete inline here (operation_aborted -> finish(), which cancels signals_):
        // waiting for another signal after that would keep io_.run() going forever.
        cancel_wait_.emit(asio::cancellation_type::terminal);
      }
      if (!finished_) watch_signals();
    });
  }

  void watch_child() {
    children_.async_wait([this](std::error_code ec, int) {
      if (ec) return;
      if (!child_.reap()) return watch_child();
      kill_timer_.cancel();
      lease_timer_.cancel();
      renew_timer_.cancel();
      release(lost_ ? exit_lease_lost : child_.exit_status());
    });
  }

  void release(int code) {
    if (permit_) {
      return semaphore_.async_release(*permit_, [this, code](std::error_code ec) {
        if (ec == deadbolt::errc::no_such_permit) {
          if (!lost_) std::fprintf(stderr, "deadbolt: the permit of %s had expired when the command ended\n", o_.name.c_str());
          return finish(exit_lease_lost);
        }
        if (ec) std::fprintf(stderr, "deadbolt: could not release the permit of %s: %s\n", o_.name.c_str(), ec.message().c_str());
        finish(code);
      });
    }
    with_lock([&](auto& lock) {
      lock.async_unlock(owner_, [this, code](std::error_code ec) {
        if (ec == deadbolt::errc::lease_lost || ec == deadbolt::errc::not_owner) {
          if (!lost_) std::fprintf(stderr, "deadbolt: lock %s was no longer held when the command ended\n", o_.name.c_str());
          return finish(exit_lease_lost);
        }
        if (ec) std::fprintf(stderr, "deadbolt: could not release lock %s: %s\n", o_.name.c_str(), ec.message().c_str());
        finish(code);
      });
    });
  }

  void finish(int code) {
    if (finished_) return;
    finished_ = true;
    exit_code_ = code;
    status_timer_.cancel();
    lease_timer_.cancel();
    renew_timer_.cancel();
    kill_timer_.cancel();
    signals_.cancel();
    children_.cancel();
    client_.shutdown();
  }

  const options& o_;
  asio::io_context io_;
  deadbolt::client client_;
  deadbolt::reentrant_lock lock_;
  deadbolt::fenced_lock fenced_;
  deadbolt::fair_lock fair_;
  deadbolt::read_write_lock rw_;
  deadbolt::expirable_semaphore semaphore_;
  std::optional<deadbolt::permit_id> permit_;
  signal_source signals_;
  asio::signal_set children_;
  asio::steady_timer status_timer_;
  asio::steady_timer lease_timer_;
  asio::steady_timer renew_timer_;  // --semaphore: the permit's lease
  asio::steady_timer kill_timer_;
  asio::cancellation_signal cancel_wait_;
  deadbolt::owner_id owner_;
  child_process child_;
  status_line status_;
  clock::time_point started_waiting_;
  bool waiting_ = false;
  bool acquired_ = false;
  bool lost_ = false;
  bool finished_ = false;
  int interrupted_by_ = 0;
  int exit_code_ = exit_failure;
};

}  // namespace

int run_command(const options& o) { return runner(o).run(); }

}  // namespace deadbolt::cli
