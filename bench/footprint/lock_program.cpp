// The footprint of deadbolt: connect, lock and unlock through the blocking API.
//   lock_program redis://127.0.0.1:PORT   exits 0 when the lock was taken and released
#include <chrono>
#include <cstdio>
#include <system_error>

#include "deadbolt/blocking.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  deadbolt::config cfg;
  cfg.url = argv[1];
  deadbolt::blocking_client client(cfg);
  auto lock = client.lock("footprint");
  std::error_code ec;
  if (!lock.try_lock_for(std::chrono::seconds(5), std::chrono::milliseconds(0) /*watchdog*/, ec) || ec) {
    std::fprintf(stderr, "lock failed: %s\n", ec.message().c_str());
    return 1;
  }
  lock.unlock(ec);
  if (ec) {
    std::fprintf(stderr, "unlock failed: %s\n", ec.message().c_str());
    return 1;
  }
  std::puts("locked and unlocked");
  return 0;
}
