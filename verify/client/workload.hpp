// The mutex workload through the library: each worker repeats, until told to stop, acquire the fenced
// lock → read-modify-write the register in the store with the token, `increments` times → unlock,
// recording every step (history.hpp). Worker w uses lock `<lock>-<w mod locks>` (just `<lock>` with one
// lock) and that lock's register, `register:<lock name>`. Between a release and the next acquire a
// worker may think (a random pause up to `think`), so that a fault finds some workers outside the
// lock, about to acquire.
#pragma once
#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <deadbolt/blocking.hpp>
#include <deadbolt/client.hpp>

#include "fenced_store.hpp"

namespace verify {

struct workload_options {
  std::string process = "l1";     // the history's process name
  std::string lock = "verify-mutex";
  int workers = 4;                // threads (blocking) or concurrent chains (async), one client
  int locks = 1;
  std::chrono::milliseconds lease{0};     // 0: the watchdog (config::watchdog_timeout)
  std::chrono::milliseconds watchdog{0};  // the lease a watchdog hold starts with
  std::chrono::milliseconds wait{6000};
  std::chrono::milliseconds work{100};    // the longest pause between a read and its write
  int increments = 1;                     // per hold
  std::chrono::milliseconds think{0};     // the longest pause between a release and the next acquire
  std::string kind = "mutex";             // mutex (fenced lock and register), semaphore, read-write, fair, multi, red
  int permits = 2;                        // the semaphore's
};

/// Which hold each (lock, owner) has now, for the lease-lost handler, which names only those. The
/// blocking API's owner is the thread's deadbolt::port::thread_id().
class hold_table {
 public:
  void set(const std::string& lock, std::int64_t owner, std::string hold);
  void clear(const std::string& lock, std::int64_t owner);
  std::string find(const std::string& lock, std::int64_t owner) const;  // empty: none

 private:
  mutable std::mutex mutex_;
  std::map<std::pair<std::string, std::int64_t>, std::string> holds_;
};

std::string lock_of(const workload_options& o, int worker);
inline std::string register_of(const std::string& lock) { return "register:" + lock; }

/// Runs the workload until `stop`; returns when every worker has finished its operation in progress.
void run_blocking(const workload_options& o, deadbolt::blocking_client& locks, fenced_store& store,
                  hold_table& holds, const std::atomic<bool>& stop);
void run_async(const workload_options& o, deadbolt::client& locks, fenced_store& store, hold_table& holds,
               const std::atomic<bool>& stop);
/// The other kinds (kinds_blocking.cpp), through the blocking API: holds only, no register.
void run_semaphore(const workload_options& o, deadbolt::blocking_client& locks, const std::atomic<bool>& stop);
void run_read_write(const workload_options& o, deadbolt::blocking_client& locks, hold_table& holds,
                    const std::atomic<bool>& stop);
void run_fair(const workload_options& o, deadbolt::blocking_client& locks, hold_table& holds,
              const std::atomic<bool>& stop);
/// A multi lock over `<lock>-a` and `<lock>-b` (even workers) beside holders of one of them (odd).
void run_multi(const workload_options& o, deadbolt::blocking_client& locks, hold_table& holds,
               const std::atomic<bool>& stop);
/// A red lock over one client per server (`--red-urls`).
void run_red(const workload_options& o, std::vector<std::unique_ptr<deadbolt::blocking_client>>& clients,
             hold_table& holds, const std::atomic<bool>& stop);

}  // namespace verify
