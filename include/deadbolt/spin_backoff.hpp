// How a spin lock (Redisson RSpinLock, docs/protocol.md §5) waits between attempts while the lock is taken:
// it never subscribes to the lock's channel, it sleeps and tries again.
#pragma once

#include <chrono>
#include <cstdint>

namespace deadbolt {

/// A spin lock's pause between two attempts. Redisson's LockOptions defaults:
///
/// - exponential (the default): the first pause is `initial_delay` (1 ms); each next one is
///   min(max_delay, previous * multiplier + a random integer in [0, failures)) ms, where `failures`
///   counts the pauses so far (max_delay 128 ms, multiplier 2). Once it reaches max_delay it stays there.
/// - constant: always `delay` (64 ms), no jitter (as Redisson's ConstantBackOffPolicy).
///
/// A pause never extends past a try_lock's wait.
struct spin_backoff {
  enum class policy { exponential, constant };

  policy kind = policy::exponential;
  std::chrono::milliseconds initial_delay{1};  ///< exponential: the first pause
  std::chrono::milliseconds max_delay{128};    ///< exponential: the cap
  std::int64_t multiplier = 2;                 ///< exponential: growth factor (at least 1)
  std::chrono::milliseconds delay{64};         ///< constant: every pause

  static spin_backoff exponential(std::chrono::milliseconds initial = std::chrono::milliseconds(1),
                                  std::chrono::milliseconds max = std::chrono::milliseconds(128),
                                  std::int64_t multiplier = 2) {
    spin_backoff b;
    b.kind = policy::exponential;
    b.initial_delay = initial;
    b.max_delay = max;
    b.multiplier = multiplier;
    return b;
  }
  static spin_backoff constant(std::chrono::milliseconds delay = std::chrono::milliseconds(64)) {
    spin_backoff b;
    b.kind = policy::constant;
    b.delay = delay;
    return b;
  }
};

}  // namespace deadbolt
