// Redisson's permit-expirable semaphore (RPermitExpirableSemaphore, docs/protocol.md §9), wire-compatible:
// the available count is the STRING `name`, each acquired permit is a member of the ZSET
// `{name}:timeout` (its id's 16 raw bytes, scored by its expiry), releases publish on
// `redisson_sc:{name}`. A permit whose lease ends comes back by itself (the next acquire, release or
// count reclaims it), so a crashed holder cannot leak permits.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <utility>

#include "deadbolt/detail/counter_engine.hpp"
#include "deadbolt/permit_id.hpp"

namespace deadbolt {

class client;

/// A handle to one named permit-expirable semaphore. Cheap to copy. Each acquire takes one permit
/// and returns its id; release it by that id. Leases: zero means the permit never expires. Expiry is
/// decided by the clients' wall clocks (as Redisson's): keep hosts NTP-synced.
class expirable_semaphore : public detail::counter_base {
 public:
  /// Waits as long as it takes for one permit held for `lease`.
  /// Signature: void(std::error_code, deadbolt::permit_id).
  template <typename Token>
  auto async_acquire(std::chrono::milliseconds lease, Token&& token) {
    return acquire<detail::result_permit>(-1, lease, std::forward<Token>(token));
  }
  /// Waits up to `wait` (zero: one attempt; negative: as long as it takes).
  /// Signature: void(std::error_code, std::optional<deadbolt::permit_id>) — empty when none was free.
  template <typename Token>
  auto async_try_acquire(std::chrono::milliseconds wait, std::chrono::milliseconds lease, Token&& token) {
    return acquire<detail::result_optional_permit>(wait_arg(wait), lease, std::forward<Token>(token));
  }
  /// Releases the permit; errc::no_such_permit if it is not held (unknown, released, or expired).
  /// Signature: void(std::error_code).
  template <typename Token>
  auto async_release(const permit_id& id, Token&& token) {
    return by_id<detail::result_void>(detail::counter_call::permit_release, id, 0, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, bool released) — false if it was not held.
  template <typename Token>
  auto async_try_release(const permit_id& id, Token&& token) {
    return by_id<detail::result_bool>(detail::counter_call::permit_try_release, id, 0, std::forward<Token>(token));
  }
  /// Restarts the permit's lease at `lease` from now (zero: never expires).
  /// Signature: void(std::error_code, bool updated) — false if it is not held any more.
  template <typename Token>
  auto async_update_lease(const permit_id& id, std::chrono::milliseconds lease, Token&& token) {
    return by_id<detail::result_bool>(detail::counter_call::permit_update_lease, id, lease.count(),
                                      std::forward<Token>(token));
  }
  /// Sets the available permits if the semaphore does not exist yet. Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_try_set_permits(std::int64_t permits, Token&& token) {
    return run<detail::result_bool>(detail::counter_call::sem_try_set, count(permits), std::forward<Token>(token));
  }
  /// Adds `permits` (negative: removes). Signature: void(std::error_code, std::int64_t available).
  template <typename Token>
  auto async_add_permits(std::int64_t permits, Token&& token) {
    return run<detail::result_int>(detail::counter_call::sem_add, count(permits), std::forward<Token>(token));
  }
  /// Reclaims expired permits, then counts. Signature: void(std::error_code, std::int64_t available).
  template <typename Token>
  auto async_available_permits(Token&& token) {
    return run<detail::result_int>(detail::counter_call::permit_available, {}, std::forward<Token>(token));
  }

 private:
  friend class client;
  expirable_semaphore(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : counter_base(std::move(core), std::move(ex), name, detail::counter_kind::expirable) {}

  template <typename Result, typename Token>
  auto acquire(std::int64_t wait_ms, std::chrono::milliseconds lease, Token&& token) {
    detail::counter_args a;
    a.n = 1;
    a.wait_ms = wait_ms;
    a.lease_ms = lease.count();
    return detail::async_run<Result>(core_, executor_, std::forward<Token>(token),
                                     [names = names_, a](auto& core, auto& c) {
                                       return detail::start_permit_acquire(core, names, a, c);
                                     });
  }
  template <typename Result, typename Token>
  auto by_id(detail::counter_call call, const permit_id& id, std::int64_t lease_ms, Token&& token) {
    detail::counter_args a;
    a.id = id;
    a.lease_ms = lease_ms;
    return run<Result>(call, a, std::forward<Token>(token));
  }
};

}  // namespace deadbolt
