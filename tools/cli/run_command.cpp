// deadbolt run: wait for the lock, run COMMAND under it, release it when COMMAND ends.
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <optional>
#include <string>

#include "child_process.hpp"
#include "commands.hpp"
#include "connect.hpp"
#include "duration.hpp"
#include "exit_codes.hpp"
#include "holder_info.hpp"
#include "secrets.hpp"
#include "signal_source.hpp"
#include "status_line.hpp"
#include "verbose_log.hpp"

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
        spin_(client_.spin_lock(o.name)),
        fair_(client_.fair_lock(o.name)),
        rw_(client_.read_write_lock(o.name)),
        semaphore_(client_.expirable_semaphore(o.name)),
        connector_(io_, client_, o),
        signals_(io_),
        status_timer_(io_),
        lease_timer_(io_),
        renew_timer_(io_),
        info_timer_(io_),
        owner_(static_cast<deadbolt::owner_id>(::getpid())) {}

  int run() {
    const auto started = clock::now();
    // --wait bounds connecting too; -n (--wait 0) still connects for up to --connect-timeout.
    const milliseconds bound = o_.wait && o_.wait->count() > 0 ? std::min(*o_.wait, o_.connect_timeout) : o_.connect_timeout;
    watch_signals();  // first: a bad config finishes at once, cancelling it
    connector_.start(bound, [this, started](int code) {
      if (finished_) return;  // interrupted while connecting
      if (code != 0) return finish(code);
      milliseconds wait(-1);
      if (o_.wait) {
        const auto spent = std::chrono::duration_cast<milliseconds>(clock::now() - started);
        wait = std::max(*o_.wait - spent, milliseconds(0));
      }
      acquire(wait);
    });
    io_.run();
    return exit_code_;
  }

 private:
  void acquire(milliseconds wait) {
    waiting_ = true;
    started_waiting_ = clock::now();
    verbose("waiting for %s%s%s", what().c_str(), wait.count() < 0 ? "" : " for at most ",
            wait.count() < 0 ? "" : format_duration(wait).c_str());
    if (!o_.quiet && ::isatty(STDERR_FILENO)) show_status();
    auto acquired = [this](std::error_code ec, std::optional<std::uint64_t> token) { on_acquired(ec, token); };
    if (o_.mode == lock_mode::semaphore) return take_permit(wait, acquired);
    // What is there first: the lock scripts wait for a hash of application data, or a read/write lock
    // taken as a reentrant one, as for a held lock: forever.
    client_.async_inspect(o_.name, [this, wait, acquired](std::error_code ec, deadbolt::object_info info) {
      if (finished_) return;
      if (interrupted_by_ != 0) return finish(128 + interrupted_by_);  // a signal came before the wait began
      if (ec) return acquired(ec, std::nullopt);
      const std::string wrong = wrong_kind(info);
      if (!wrong.empty()) {
        status_timer_.cancel();
        status_.clear();
        std::fprintf(stderr, "deadbolt: %s\n", wrong.c_str());
        return finish(exit_failure);
      }
      take_lock(wait, acquired);
    });
  }

  // Why NAME cannot be taken as the lock asked for, or "" if it can.
  std::string wrong_kind(const deadbolt::object_info& info) const {
    const bool rw = o_.mode == lock_mode::read || o_.mode == lock_mode::write;
    switch (info.kind) {
      case deadbolt::object_kind::none: return "";
      case deadbolt::object_kind::lock:
      case deadbolt::object_kind::fenced_lock:
      case deadbolt::object_kind::fair_lock:
        // (the fenced and fair locks share the reentrant lock's hash; a free one leaves no hash)
        if (rw && info.locked()) return o_.name + " is a lock, not a read/write lock: drop --read/--write";
        return "";
      case deadbolt::object_kind::read_write_lock:
        if (!rw) return o_.name + " is a read/write lock (held for " + info.mode + "): use --read or --write";
        return "";
      case deadbolt::object_kind::expirable_semaphore:
      case deadbolt::object_kind::semaphore_or_latch:
        return o_.name + " is not a lock: it holds a number (a semaphore's or a latch's): use --semaphore N";
      default: break;
    }
    if (info.redis_type == "hash") {
      return o_.name + " is not a lock: it is a hash with field '" + info.foreign_field + "' (application data?)";
    }
    return o_.name + " is not a lock: it is a " + info.redis_type;
  }

  template <typename Acquired>
  void take_lock(milliseconds wait, Acquired acquired) {
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

  // "lock NAME", "the write lock NAME", "a permit of NAME".
  std::string what() const {
    switch (o_.mode) {
      case lock_mode::fenced: return "the fenced lock " + o_.name;
      case lock_mode::fair: return "the fair lock " + o_.name;
      case lock_mode::read: return "the read lock " + o_.name;
      case lock_mode::write: return "the write lock " + o_.name;
      case lock_mode::semaphore: return "a permit of " + o_.name;
      case lock_mode::spin: return "the spin lock " + o_.name;
      default: return "lock " + o_.name;
    }
  }

  // --semaphore N: creates the semaphore with N permits if it does not exist, then takes one permit
  // with the permit lease (kept alive while COMMAND runs: renew_permit). An existing semaphore of
  // another size is an error: quietly using its size would not be what N said.
  template <typename Acquired>
  void take_permit(milliseconds wait, Acquired acquired) {
    semaphore_.async_try_set_permits(o_.permits, [this, wait, acquired](std::error_code ec, bool created) {
      if (ec) return acquired(ec, std::nullopt);
      if (created) {
        verbose("created semaphore %s with %lld permits", o_.name.c_str(), static_cast<long long>(o_.permits));
        return take_one_permit(wait, acquired);
      }
      // inspect() reads the available and the acquired permits at one instant (a permit moves between
      // the two atomically, so two separate reads could count it twice or not at all).
      client_.async_inspect(o_.name, [this, wait, acquired](std::error_code iec, deadbolt::object_info info) {
        if (iec) return acquired(iec, std::nullopt);
        if (info.kind != deadbolt::object_kind::semaphore_or_latch &&
            info.kind != deadbolt::object_kind::expirable_semaphore) {
          std::fprintf(stderr, "deadbolt: %s is not a semaphore (its value is not a number)\n", o_.name.c_str());
          return finish(exit_failure);
        }
        const long long size = static_cast<long long>(info.value.value_or(0)) + static_cast<long long>(info.permit_count);
        if (size != o_.permits) {
          std::fprintf(stderr,
                       "deadbolt: %s is a semaphore of %lld permits, not %lld: use --semaphore %lld, "
                       "or delete it to start over\n",
                       o_.name.c_str(), size, static_cast<long long>(o_.permits), size);
          return finish(exit_failure);
        }
        take_one_permit(wait, acquired);
      });
    });
  }

  template <typename Acquired>
  void take_one_permit(milliseconds wait, Acquired acquired) {
      semaphore_.async_try_acquire(
          wait, hold_lease(),
          asio::bind_cancellation_slot(cancel_wait_.slot(),
                                       [this, acquired](std::error_code aec, std::optional<deadbolt::permit_id> id) {
                                         permit_ = id;
                                         acquired(aec, id ? std::optional<std::uint64_t>(0) : std::nullopt);
                                       }));
  }

  // The lease of the hold: a permit's, and the TTL of the holder info key.
  milliseconds hold_lease() const {
    if (o_.lease.count() > 0) return o_.lease;
    return o_.watchdog ? *o_.watchdog : milliseconds(30000);
  }

  // Restarts the permit's lease every third of it; each confirmation moves the permit's deadline
  // (watch_permit_deadline stops COMMAND before it); a permit found gone is lost at once.
  void renew_permit() {
    renew_timer_.expires_after(hold_lease() / 3);
    renew_timer_.async_wait([this](std::error_code ec) {
      if (ec || !permit_ || !child_.running()) return;
      const clock::time_point asked = clock::now();
      semaphore_.async_update_lease(*permit_, hold_lease(), [this, asked](std::error_code uec, bool held) {
        if (!child_.running() || lost_) return;
        if (!uec && !held) return lease_lost("the permit expired or was taken away");
        if (uec) {
          verbose("could not renew the permit of %s: %s", o_.name.c_str(), uec.message().c_str());
        } else {
          permit_valid_until_ = std::max(permit_valid_until_, asked + hold_lease() - deadbolt::config().margin_of(hold_lease()));
          verbose("renewed the permit of %s for %s", o_.name.c_str(), format_duration(hold_lease()).c_str());
          client_.async_command({"PEXPIRE", holder_key(), std::to_string(hold_lease().count())}, [](std::error_code, deadbolt::reply) {});
        }
        renew_permit();
      });
    });
  }

  // Calls f with the lock object of the chosen kind (the fenced lock unlocks as the reentrant one; the
  // spin lock has the reentrant lock's hash, leases and watchdog, but waits by polling and publishes
  // nothing).
  template <typename F>
  void with_lock(F&& f) {
    switch (o_.mode) {
      case lock_mode::fair: return f(fair_);
      case lock_mode::spin: return f(spin_);
      case lock_mode::read: return f(rw_.read());
      case lock_mode::write: return f(rw_.write());
      default: return f(lock_);
    }
  }

  // Every 250 ms while waiting: the line with the lock's TTL and its first holder, in human terms if
  // that holder left its info (holder_info.hpp), else its owner field.
  void show_status() {
    status_timer_.expires_after(milliseconds(250));
    status_timer_.async_wait([this](std::error_code ec) {
      if (ec || acquired_) return;
      client_.async_inspect(o_.name, [this](std::error_code, deadbolt::object_info info) {
        const long long ttl = info.ttl.count();
        if (o_.mode == lock_mode::semaphore || info.holders.empty()) return status_shown(ttl, "");
        const std::string holder = info.holders.front().owner;
        client_.async_command({"GET", holder_info_key(o_.name, holder)}, [this, ttl, holder](std::error_code, deadbolt::reply r) {
          const auto decoded = r.is_null() ? std::nullopt : decode_holder_info(r.text);
          status_shown(ttl, decoded ? describe(*decoded) : holder);
        });
      });
    });
  }

  void status_shown(long long ttl_ms, const std::string& holder) {
    if (acquired_ || finished_) return;
    status_.show(o_.name, holder, ttl_ms, clock::now() - started_waiting_);
    show_status();
  }

  void on_acquired(std::error_code ec, std::optional<std::uint64_t> token) {
    status_timer_.cancel();
    status_.clear();
    if (finished_) return;
    if (ec == asio::error::operation_aborted) return finish(128 + interrupted_by_);
    if (ec) return finish(report_error(o_, ec, "cannot take " + what()));
    if (!token) return not_had();
    acquired_ = true;
    verbose("acquired %s after %s%s%s", what().c_str(), format_duration(std::chrono::duration_cast<milliseconds>(clock::now() - started_waiting_)).c_str(),
            o_.mode == lock_mode::fenced ? ", fencing token " : permit_ ? ", permit " : "",
            o_.mode == lock_mode::fenced ? std::to_string(*token).c_str() : permit_ ? permit_->hex().c_str() : "");
    if (interrupted_by_ != 0) return release(128 + interrupted_by_);  // the signal beat the cancellation
    if (permit_) return confirm_permit(*token);
    start_command(*token);
  }

  // A permit's lease is not tracked by the library: its deadline is the send time of the request that
  // last confirmed it + the lease - the margin. The acquire's send time is not known here (it may have
  // waited long), so the lease is restarted once now, from a moment known to come before the send.
  void confirm_permit(std::uint64_t token) {
    const clock::time_point asked = clock::now();
    semaphore_.async_update_lease(*permit_, hold_lease(), [this, asked, token](std::error_code ec, bool held) {
      if (finished_) return;
      if (ec) return release(report_error(o_, ec, "cannot confirm the permit of " + o_.name));
      if (!held) {
        std::fprintf(stderr, "deadbolt: the permit of %s expired before COMMAND started\n", o_.name.c_str());
        return finish(exit_lease_lost);
      }
      permit_valid_until_ = asked + hold_lease() - deadbolt::config().margin_of(hold_lease());
      if (interrupted_by_ != 0) return release(128 + interrupted_by_);
      start_command(token);
    });
  }

  void start_command(std::uint64_t token) {
    leave_holder_info();
    std::vector<std::string> env{"DEADBOLT_LOCK_NAME=" + o_.name};
    if (o_.mode == lock_mode::fenced) env.push_back("DEADBOLT_FENCING_TOKEN=" + std::to_string(token));
    if (permit_) env.push_back("DEADBOLT_PERMIT_ID=" + permit_->hex());
    environment_change secrets = command_environment();
    env.insert(env.end(), secrets.added.begin(), secrets.added.end());
    verbose("running %s", o_.argv[0].c_str());
    if (grace() < o_.grace) {
      verbose("--grace %s is more than %s of the lease: using %s", format_duration(o_.grace).c_str(),
              o_.lease.count() > 0 ? "half" : "a third", format_duration(grace()).c_str());
    }
    auto on_event = [this](child_process::event e) { on_child(e); };
    if (auto spawn_error = child_.spawn(o_.argv, env, secrets.removed, grace(), on_event)) {
      std::fprintf(stderr, "deadbolt: cannot run %s: %s\n", o_.argv[0].c_str(), spawn_error.message().c_str());
      // As shells: 127 when there is no such command, 126 when it cannot be run.
      const bool missing = spawn_error.value() == ENOENT || spawn_error.value() == ENOTDIR;
      return release(missing ? exit_command_not_found : exit_command_not_executable);
    }
    watch_lease();
  }

  void watch_lease() {
    client_.on_lease_lost([this](std::string_view lost_name, deadbolt::owner_id lost_owner) {
      if (lost_name == o_.name && lost_owner == owner_) lease_lost("it was taken away or expired");
    });
    if (permit_ && o_.lease.count() == 0) renew_permit();
    if (!permit_ && o_.lease.count() == 0) refresh_holder_info();
    if (permit_) return watch_permit_deadline();
    watch_deadline();
  }

  // The permit's deadline (confirm_permit, renew_permit), as watch_deadline does a lock's.
  void watch_permit_deadline() {
    if (lost_ || finished_ || !child_.running()) return;
    const milliseconds left = std::chrono::duration_cast<milliseconds>(permit_valid_until_ - clock::now());
    if (left > grace()) {
      lease_timer_.expires_at(permit_valid_until_ - grace());
      lease_timer_.async_wait([this](std::error_code ec) {
        if (!ec) watch_permit_deadline();
      });
      return;
    }
    const std::string why = o_.lease.count() > 0 ? "its lease of " + format_duration(o_.lease) + " ends"
                                                 : "not renewed in time: the server may expire it";
    stop_before_deadline(why + " in " + format_duration(std::max(left, milliseconds(0))), std::max(left, milliseconds(0)));
  }

  // How long before the hold's deadline COMMAND gets SIGTERM (--grace), and the delay between SIGTERM
  // and SIGKILL for what COMMAND leaves behind: at most a third of the watchdog lease (so that a
  // renewal on time always comes first) or half a fixed --lease.
  milliseconds grace() const { return std::min(o_.grace, o_.lease.count() > 0 ? o_.lease / 2 : hold_lease() / 3); }

  // The library's deadline of the hold (async_valid_for: the last confirmed send + the lease - the
  // margin, docs/locks/reentrant_lock.md): COMMAND's tree gets SIGTERM --grace before it and SIGKILL
  // at it, before the server can expire the lock. Asked again when the timer fires: a renewal that
  // came meanwhile moved it.
  void watch_deadline() {
    with_lock([&](auto& lock) {
      lock.async_valid_for(owner_, [this](std::error_code ec, milliseconds valid) {
        if (ec || lost_ || finished_ || !child_.running()) return;
        if (valid > grace()) {
          lease_timer_.expires_after(valid - grace());
          lease_timer_.async_wait([this](std::error_code tec) {
            if (!tec) watch_deadline();
          });
          return;
        }
        const std::string why = o_.lease.count() > 0 ? "its lease of " + format_duration(o_.lease) + " ends"
                                                     : "not renewed in time: the server may expire it";
        stop_before_deadline(why + " in " + format_duration(valid), valid);
      });
    });
  }

  // The holder info key (holder_info.hpp) of this hold: "<client uuid>:<owner>[:write]", or the permit.
  std::string holder_key() const {
    if (permit_) return holder_info_key(o_.name, permit_->hex());
    std::string field = client_.id() + ":" + std::to_string(owner_);
    if (o_.mode == lock_mode::write) field += ":write";
    return holder_info_key(o_.name, field);
  }

  void leave_holder_info() {
    client_.async_command({"SET", holder_key(), encode_holder_info(o_.argv), "PX", std::to_string(hold_lease().count())},
                          [](std::error_code, deadbolt::reply) {});
  }

  // Under the watchdog: every third of the lease, the info key's TTL follows the lock's (the library's
  // watchdog renews the lock itself; --verbose shows the TTL it keeps).
  void refresh_holder_info() {
    info_timer_.expires_after(hold_lease() / 3);
    info_timer_.async_wait([this](std::error_code ec) {
      if (ec || lost_ || !child_.running()) return;
      client_.async_command({"PEXPIRE", holder_key(), std::to_string(hold_lease().count())}, [](std::error_code, deadbolt::reply) {});
      if (verbose_enabled()) {
        client_.async_command({"PTTL", o_.name}, [this](std::error_code ec, deadbolt::reply ttl) {
          if (ec) verbose("lease of %s: %s", o_.name.c_str(), ec.message().c_str());
          else verbose("lease of %s: ttl %s (the watchdog renews it every %s)", o_.name.c_str(),
                       format_duration(milliseconds(ttl.as_int().value_or(0))).c_str(),
                       format_duration(hold_lease() / 3).c_str());
        });
      }
      refresh_holder_info();
    });
  }

  void forget_holder_info() { client_.async_command({"DEL", holder_key()}, [](std::error_code, deadbolt::reply) {}); }

  // The whole tree gets SIGTERM, and SIGKILL after --grace (the guardian times it).
  void lease_lost(const std::string& why) {
    if (lost_ || !child_.running()) return;
    lost_ = true;
    forget_holder_info();
    std::fprintf(stderr, "deadbolt: lost lock %s (%s): stopping the command\n", o_.name.c_str(), why.c_str());
    child_.stop_tree();
  }

  // The hold's deadline is `left` away: SIGTERM now, SIGKILL at the deadline. The run ends as a lost
  // lease (exit 5): COMMAND could not finish under the lock.
  void stop_before_deadline(const std::string& why, milliseconds left) {
    if (lost_ || !child_.running()) return;
    lost_ = true;
    forget_holder_info();
    std::fprintf(stderr, "deadbolt: lost lock %s (%s): stopping the command\n", o_.name.c_str(), why.c_str());
    child_.stop_tree(left);
  }

  void watch_signals() {
    signals_.async_wait([this](std::error_code ec, signal_source::received r) {
      if (ec || finished_) return;
      if (r.signal == SIGCONT) {
        if (acquired_) child_.resume();  // after a stop that COMMAND's started (on_child)
      } else if (acquired_) {
        pass_on(r);
      } else if (!waiting_) {
        return finish(128 + r.signal);  // still connecting: nothing to cancel or release
      } else {
        interrupted_by_ = r.signal;
        // The wait may complete inline here (operation_aborted -> finish(), which cancels signals_):
        // waiting for another signal after that would keep io_.run() going forever.
        cancel_wait_.emit(asio::cancellation_type::terminal);
      }
      if (!finished_) watch_signals();
    });
  }

  // A signal to deadbolt while COMMAND runs goes to COMMAND's process group, once: COMMAND decides,
  // and we release when its tree has ended. Not passed on: a terminal's that COMMAND's group got
  // itself (it has the terminal: a hangup), and the same signal from the same sender again within a
  // second, which is one signal delivered twice (timeout(1) signals its child, then its whole group;
  // a supervisor may do the same).
  void pass_on(const signal_source::received& r) {
    if (r.from_kernel && child_.has_terminal()) return;
    const auto now = clock::now();
    if (r.signal == last_passed_.signal && r.sender == last_passed_.sender && !r.from_kernel &&
        now - last_passed_at_ < std::chrono::seconds(1)) {
      verbose("not passing signal %d on again (the same sender, %s after the first)", r.signal,
              format_duration(std::chrono::duration_cast<milliseconds>(now - last_passed_at_)).c_str());
      return;
    }
    last_passed_ = r;
    last_passed_at_ = now;
    verbose("passing signal %d on to %s", r.signal, o_.argv[0].c_str());
    child_.send(r.signal);
  }

  // No parent in another process group of our session, that is, no shell doing job control above us
  // (our parent is the only candidate: the guardian, the rest of our group, is our child).
  static bool group_is_orphaned() {
    const pid_t parent = ::getppid();
    return ::getsid(parent) != ::getsid(0) || ::getpgid(parent) == ::getpgrp();
  }

  void on_child(const child_process::event& e) {
    if (e.what == child_process::event::no_subreaper) {
      verbose("PR_SET_CHILD_SUBREAPER refused (%s): a process that leaves %s's process group is found only "
              "while its parent lives", std::strerror(e.value), o_.argv[0].c_str());
      return;
    }
    if (e.what == child_process::event::stopped) {
      // A job-control stop (Ctrl-Z, a read from the terminal in the background): stop with COMMAND,
      // as the job the shell knows, so that the shell's fg/bg continue both (SIGCONT: resume()).
      if (e.value != SIGTSTP && e.value != SIGTTIN && e.value != SIGTTOU) return;
      // In an orphaned process group (deadbolt a session leader: `ssh -t host deadbolt ...`) the
      // kernel discards these stops, so no shell would ever continue us: COMMAND goes on instead,
      // as it did in deadbolt's group.
      if (group_is_orphaned()) return child_.resume();
      child_.take_terminal_back();
      ::kill(::getpid(), e.value);
      return;
    }
    lease_timer_.cancel();
    renew_timer_.cancel();
    info_timer_.cancel();
    if (e.what == child_process::event::guardian_lost) {
      std::fprintf(stderr, "deadbolt: the process watching %s died: its processes were killed\n", o_.argv[0].c_str());
      return release(lost_ ? exit_lease_lost : exit_failure);
    }
    if (e.left_behind > 0) {
      verbose("stopped %d process%s %s left behind", e.left_behind, e.left_behind == 1 ? "" : "es", o_.argv[0].c_str());
    }
    verbose("%s exited with %d", o_.argv[0].c_str(), e.value);
    release(lost_ ? exit_lease_lost : e.value);
  }

  // Deletes the holder info first (sent ahead of the release on the same connection), then releases.
  void release(int code) {
    forget_holder_info();
    if (permit_) {
      return semaphore_.async_release(*permit_, [this, code](std::error_code ec) {
        if (ec == deadbolt::errc::no_such_permit) {
          if (!lost_) std::fprintf(stderr, "deadbolt: the permit of %s had expired when the command ended\n", o_.name.c_str());
          return finish(exit_lease_lost);
        }
        if (ec) return release_refused(ec);
        verbose("released %s", what().c_str());
        finish(code);
      });
    }
    with_lock([&](auto& lock) {
      lock.async_unlock(owner_, [this, code](std::error_code ec) {
        if (ec == deadbolt::errc::lease_lost || ec == deadbolt::errc::not_owner) {
          if (!lost_) std::fprintf(stderr, "deadbolt: lock %s was no longer held when the command ended\n", o_.name.c_str());
          return finish(exit_lease_lost);
        }
        // Stopped for its deadline, with a server that did not answer the renewals (and so not the
        // release either): the lease ends on the server by itself.
        if (ec && lost_) {
          verbose("could not release %s: %s", what().c_str(), ec.message().c_str());
          return finish(exit_lease_lost);
        }
        if (ec) return release_refused(ec);
        verbose("released %s", what().c_str());
        finish(code);
      });
    });
  }

  // Not had in time: say who holds it (as the waiting display does, terminal or not), or, for a fair
  // lock that is free with others queued ahead (a dead waiter among them keeps its place for
  // minutes), say that rather than "held".
  void not_had() {
    client_.async_inspect(o_.name, [this](std::error_code ec, deadbolt::object_info info) {
      if (!ec && o_.mode == lock_mode::fair && !info.locked() && !info.queue.empty()) return queued_ahead(info);
      if (ec || info.holders.empty()) return not_had_because("");
      const std::string holder = info.holders.front().owner;
      const std::size_t others = info.holders.size() - 1;
      client_.async_command({"GET", holder_info_key(o_.name, holder)}, [this, holder, others](std::error_code, deadbolt::reply r) {
        const auto decoded = r.is_null() ? std::nullopt : decode_holder_info(r.text);
        std::string by = decoded ? describe(*decoded) : holder;
        if (others > 0) by += " (and " + std::to_string(others) + (others == 1 ? " more holder)" : " more holders)");
        not_had_because(fit(by, by.size()));
      });
    });
  }

  // "lock x is held by pid 7 on web-1, for 3.0s: make (--nonblock)", "timed out after 1.0s waiting
  // for lock x, held by ...".
  void not_had_because(const std::string& holder) {
    const std::string by = holder.empty() ? "" : " by " + holder;
    if (o_.nonblock && o_.mode == lock_mode::semaphore) {
      std::fprintf(stderr, "deadbolt: no permit of %s is free (--nonblock)\n", o_.name.c_str());
    } else if (o_.nonblock) {
      std::fprintf(stderr, "deadbolt: %s is held%s (--nonblock)\n", what().c_str(), by.c_str());
    } else {
      std::fprintf(stderr, "deadbolt: timed out after %s waiting for %s%s%s\n", format_duration(*o_.wait).c_str(),
                   what().c_str(), by.empty() ? "" : ", held", by.c_str());
    }
    finish(o_.conflict_exit_code);
  }

  void queued_ahead(const deadbolt::object_info& info) {
    const auto& first = info.queue.front();
    const auto now = std::chrono::duration_cast<milliseconds>(std::chrono::system_clock::now().time_since_epoch());
    const std::string lapses = first.deadline_ms && *first.deadline_ms > now.count()
                                   ? ", whose place lapses in " + format_duration(milliseconds(*first.deadline_ms - now.count()))
                                   : "";
    std::fprintf(stderr,
                 "deadbolt: %s is not locked, but %zu waiter%s queued ahead (first %s%s; if it died, "
                 "'deadbolt unlock --force %s' clears the queue)\n",
                 what().c_str(), info.queue.size(), info.queue.size() == 1 ? " is" : "s are", first.owner.c_str(),
                 lapses.c_str(), o_.name.c_str());
    finish(o_.conflict_exit_code);
  }

  // The server refused the release (an ACL without a command the script needs, a read-only replica):
  // say why and what is left, and exit with a code of its own. The hold may stay until its lease runs
  // out, and the next run waits that long.
  void release_refused(std::error_code ec) {
    const std::string why = what() + ": " + ec.message();
    client_.async_inspect(o_.name, [this, why](std::error_code iec, deadbolt::object_info info) {
      std::string left;
      if (!iec) {
        const std::string mine = holder_key().substr(holder_info_key(o_.name, "").size());
        bool held = false;
        for (const auto& h : info.holders) held = held || h.owner == mine;
        for (const auto& p : info.permits) held = held || p.id.hex() == mine;
        left = held ? "; it stays held until its lease runs out" + (info.ttl.count() > 0 ? " (in " + format_duration(info.ttl) + ")" : std::string())
                    : "; it is not held any more, but its waiters may not have been told";
      }
      std::fprintf(stderr, "deadbolt: could not release %s%s\n", why.c_str(), left.c_str());
      finish(exit_release_failed);
    });
  }

  void finish(int code) {
    if (finished_) return;
    finished_ = true;
    exit_code_ = code;
    status_timer_.cancel();
    lease_timer_.cancel();
    renew_timer_.cancel();
    info_timer_.cancel();
    signals_.cancel();
    client_.shutdown();
  }

  const options& o_;
  asio::io_context io_;
  deadbolt::client client_;
  deadbolt::reentrant_lock lock_;
  deadbolt::fenced_lock fenced_;
  deadbolt::spin_lock spin_;
  deadbolt::fair_lock fair_;
  deadbolt::read_write_lock rw_;
  deadbolt::expirable_semaphore semaphore_;
  std::optional<deadbolt::permit_id> permit_;
  connector connector_;
  signal_source signals_;
  asio::steady_timer status_timer_;
  asio::steady_timer lease_timer_;
  asio::steady_timer renew_timer_;  // --semaphore: the permit's lease
  asio::steady_timer info_timer_;
  clock::time_point permit_valid_until_{};  // the permit's deadline on the client (confirm_permit)   // the holder info's TTL under the watchdog
  asio::cancellation_signal cancel_wait_;
  deadbolt::owner_id owner_;
  child_process child_{io_};
  signal_source::received last_passed_;  // the last signal passed on to COMMAND, and when
  clock::time_point last_passed_at_;
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
