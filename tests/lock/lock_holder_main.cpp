// A process that takes a lock and then hangs on to it until it is killed (fault_test kills it with
// SIGKILL: no unlock, no shutdown, so only the lease can free the lock).
//   lock_holder URL NAME LEASE_MS [WATCHDOG_MS]
// LEASE_MS > 0 holds for exactly that lease; 0 holds under the watchdog (WATCHDOG_MS, default 30 s).
// Prints "locked" once the lock is held, or "error: ..." and exits 1.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <system_error>
#include <thread>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/port/asio.hpp"

int main(int argc, char** argv) {
  if (argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: %s URL NAME LEASE_MS [WATCHDOG_MS]\n", argv[0]);
    return 2;
  }
  deadbolt::config cfg;
  cfg.url = argv[1];
  cfg.client_name = "lock_holder";
  const std::chrono::milliseconds lease(std::strtoll(argv[3], nullptr, 10));
  if (argc == 5) cfg.watchdog_timeout = std::chrono::milliseconds(std::strtoll(argv[4], nullptr, 10));

  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread loop([&io] { io.run(); });

  deadbolt::client c(io.get_executor(), cfg);
  std::promise<std::error_code> done;
  c.lock(argv[2]).async_lock(1, lease, [&done](std::error_code ec) { done.set_value(ec); });
  const std::error_code ec = done.get_future().get();
  if (ec) {
    std::printf("error: %s\n", ec.message().c_str());
    std::fflush(stdout);
    std::_Exit(1);
  }
  std::printf("locked\n");
  std::fflush(stdout);
  for (;;) ::pause();  // until killed; the watchdog (if any) keeps renewing on the loop thread
}
