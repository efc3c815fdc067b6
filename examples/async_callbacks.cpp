// async_callbacks: the asynchronous client with plain callbacks, on one thread running an io_context.
//
// Every operation takes an Asio completion token; here each is a lambda receiving a std::error_code
// (and the operation's value, if it has one). The steps:
//   connect -> lock (watchdog lease) -> show that another owner cannot take it -> work -> unlock
// Any error ends the sequence with a message and a non-zero exit status. If the client finds the lease
// lost while working (the lock was deleted or expired behind our back), on_lease_lost stops the work.
//
//   async_callbacks [redis://host:port]     (default: $REDIS_URL, else redis://127.0.0.1:6379)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <system_error>

#include <deadbolt/deadbolt.hpp>

#include <asio.hpp>  // deadbolt's headers include only the Asio parts they use

using namespace std::chrono_literals;

namespace {

// The whole job as a small state machine: one member function per step, each started by the
// completion of the previous one. Everything runs on the io_context's thread, so no locking.
class job {
 public:
  job(asio::io_context& io, const deadbolt::config& cfg)
      : client_(io.get_executor(), cfg), lock_(client_.lock("deadbolt-example:async-callbacks")), work_timer_(io) {}

  void start() {
    if (std::error_code ec = client_.config_error()) return fail("config", ec);

    // Called on the client's executor when a held lock's lease is found lost. The work must stop: the
    // lock no longer protects it.
    client_.on_lease_lost([this](std::string_view name, deadbolt::owner_id owner) {
      std::printf("lease lost on %.*s (owner %lld): stopping the work\n", static_cast<int>(name.size()),
                  name.data(), static_cast<long long>(owner));
      lease_lost_ = true;
      work_timer_.cancel();
    });

    // Optional: operations connect on demand, but connecting first gives a clear error early.
    client_.async_connect([this](std::error_code ec) {
      if (ec) return fail("connect", ec);
      std::printf("connected, client id %s\n", client_.id().c_str());
      lock();
    });
  }

  int exit_code() const { return exit_code_; }

 private:
  // Async code names its owner explicitly (a callback may run on any thread of the io_context). The
  // Redis hash field is "<client id>:<owner>", as Redisson writes "<uuid>:<thread id>". The lock is
  // reentrant per owner, so every independent task needs its own id: new_owner_id() makes one that no
  // other task (nor a blocking-API thread) of this process has. A shared constant would let a second
  // task "acquire" the lock by re-entering the first one's hold.
  const deadbolt::owner_id me = deadbolt::new_owner_id();
  const deadbolt::owner_id someone_else = deadbolt::new_owner_id();

  void lock() {
    // No lease: the client's watchdog renews the lease (config::watchdog_timeout) until unlock.
    lock_.async_lock(me, [this](std::error_code ec) {
      if (ec) return fail("lock", ec);
      std::printf("locked %s\n", lock_.name().c_str());
      check_exclusive();
    });
  }

  void check_exclusive() {
    // One attempt by another owner, no waiting: it must fail while we hold the lock.
    lock_.async_try_lock(someone_else, [this](std::error_code ec, bool acquired) {
      if (ec) return fail("try_lock", ec);
      std::printf("another owner's try_lock: %s\n", acquired ? "acquired (wrong!)" : "refused, as it should be");
      if (acquired) {
        exit_code_ = 1;
        lock_.async_unlock(someone_else, [](std::error_code) {});
      }
      work();
    });
  }

  void work() {
    std::printf("working...\n");
    work_timer_.expires_after(200ms);  // stands for the real work
    work_timer_.async_wait([this](std::error_code ec) {
      if (lease_lost_) return fail("work", deadbolt::errc::lease_lost);
      if (ec) return fail("work", ec);
      show_ttl();
    });
  }

  void show_ttl() {
    lock_.async_remaining_ttl([this](std::error_code ec, std::chrono::milliseconds ttl) {
      if (ec) return fail("remaining_ttl", ec);
      std::printf("work done; the lease has %lld ms left (the watchdog renews it)\n",
                  static_cast<long long>(ttl.count()));
      unlock();
    });
  }

  void unlock() {
    lock_.async_unlock(me, [this](std::error_code ec) {
      // errc::lease_lost here would mean the work may have run unprotected.
      if (ec) return fail("unlock", ec);
      std::printf("unlocked\n");
      finish();
    });
  }

  void fail(const char* step, std::error_code ec) {
    std::fprintf(stderr, "%s failed: %s\n", step, ec.message().c_str());
    exit_code_ = 1;
    finish();
  }

  // Closing the client ends its connections; with nothing else to do, io_context::run() returns.
  void finish() { client_.shutdown(); }

  deadbolt::client client_;
  deadbolt::reentrant_lock lock_;
  asio::steady_timer work_timer_;
  bool lease_lost_ = false;
  int exit_code_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr in order when piped
  deadbolt::config cfg;
  if (argc > 1) {
    cfg.url = argv[1];
  } else if (const char* env = std::getenv("REDIS_URL")) {
    cfg.url = env;
  }
  cfg.connect_timeout = 3s;
  std::printf("async_callbacks: using %s\n", cfg.url.c_str());

  asio::io_context io;
  job j(io, cfg);
  j.start();
  io.run();  // runs every callback above on this thread
  std::printf("async_callbacks: %s\n", j.exit_code() == 0 ? "ok" : "FAILED");
  return j.exit_code();
}
