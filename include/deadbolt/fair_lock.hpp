// Redisson's fair lock (RFairLock), wire-compatible: first come, first served across every client.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

#include "deadbolt/reentrant_lock.hpp"

namespace deadbolt {

/// A reentrant lock granted in arrival order (docs/protocol.md §3). It shares the reentrant lock's hash, so
/// it excludes a reentrant_lock of the same name; waiters queue in a Redis list with a deadline each
/// (a zset), and an unlock wakes only the head of the queue.
///
/// - try_lock without a wait never joins the queue; with a wait it does, and a waiter that stops
///   waiting (its wait ran out, it was cancelled or failed) leaves the queue before it completes.
/// - A waiter's place lasts its own wait, or config::fair_wait_timeout (5 min) when it waits without
///   bound; one that waits longer is dropped by the others and rejoins at the back.
/// - Queue deadlines use the clients' wall clocks, as Redisson's do: keep hosts NTP-synced.
/// Operations and leases as reentrant_lock.
class fair_lock : public detail::flag_lock<detail::lock_kind::fair> {
 private:
  friend class client;
  fair_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : flag_lock(std::move(core), std::move(ex), name) {}
};

}  // namespace deadbolt
