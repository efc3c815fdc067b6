// Redisson's reentrant lock (RLock), fenced lock (RFencedLock) and spin lock (RSpinLock),
// wire-compatible: the same key, hash fields, channel and scripts, so C++ and Java processes can
// contend for one lock.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "deadbolt/detail/async.hpp"
#include "deadbolt/detail/engine.hpp"
#include "deadbolt/owner_id.hpp"
#include "deadbolt/spin_backoff.hpp"

namespace deadbolt {

class client;

namespace detail {

struct result_token {
  using value_type = std::int64_t;
  using signature = void(std::error_code, std::uint64_t);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t v) { std::move(h)(ec, static_cast<std::uint64_t>(v)); }
};
struct result_optional_token {
  using value_type = std::int64_t;
  using signature = void(std::error_code, std::optional<std::uint64_t>);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t v) {
    std::move(h)(ec, v > 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(v)) : std::nullopt);
  }
};

/// What every lock object shares: the client, the names, release and the queries.
class lock_base {
 public:
  using executor_type = asio::any_io_executor;

  const std::string& name() const noexcept { return names_->name; }
  executor_type get_executor() const noexcept { return executor_; }

  /// Releases one hold. errc::not_owner if `owner` holds none; errc::lease_lost if the client had
  /// found its lease lost. Signature: void(std::error_code).
  template <typename Token>
  auto async_unlock(owner_id owner, Token&& token) {
    return run<result_void>(std::forward<Token>(token), [names = names_, owner](auto& core, auto& c) {
      return start_unlock(core, names, owner, c);
    });
  }
  /// Deletes the lock whoever holds it and wakes a waiter (a spin lock: just deletes it).
  /// Signature: void(std::error_code, bool deleted).
  template <typename Token>
  auto async_force_unlock(Token&& token) {
    return query<result_bool>(lock_query::force_unlock, 0, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_is_locked(Token&& token) {
    return query<result_bool>(lock_query::is_locked, 0, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_is_held_by(owner_id owner, Token&& token) {
    return query<result_bool>(lock_query::is_held_by, owner, std::forward<Token>(token));
  }
  /// The server's hold count for `owner` (0 if none). Signature: void(std::error_code, std::int64_t).
  template <typename Token>
  auto async_hold_count(owner_id owner, Token&& token) {
    return query<result_int>(lock_query::hold_count, owner, std::forward<Token>(token));
  }
  /// The lock's remaining TTL: -2 ms if it is not locked, -1 ms if it has no TTL.
  /// Signature: void(std::error_code, std::chrono::milliseconds).
  template <typename Token>
  auto async_remaining_ttl(Token&& token) {
    return query<result_ms>(lock_query::remaining_ttl, 0, std::forward<Token>(token));
  }
  /// Whether this client holds the lock for `owner` and has found its lease lost (answered locally).
  /// Signature: void(std::error_code, bool).
  template <typename Token>
  auto async_lease_lost(owner_id owner, Token&& token) {
    return query<result_bool>(lock_query::lease_lost, owner, std::forward<Token>(token));
  }
  /// How long this client still counts on `owner`'s hold (answered locally; docs/locks/reentrant_lock.md,
  /// "How long the hold is valid"): from the send time of the request that last confirmed it (the
  /// acquire or a renewal), its lease less the margin (config::lease_margin, clock_drift_factor), less
  /// the time since; rounded down to whole milliseconds. Zero when `owner` does not hold the lock
  /// through this client, or its lease was found lost, or that moment has passed (the hold is then
  /// lost on the client: the lease-lost handler is called). Under the watchdog it grows back with
  /// every renewal. Signature: void(std::error_code, std::chrono::milliseconds).
  template <typename Token>
  auto async_valid_for(owner_id owner, Token&& token) {
    return query<result_ms>(lock_query::valid_for, owner, std::forward<Token>(token));
  }

  /// The lease of a hold taken without one (config::watchdog_timeout of this lock's client): the
  /// watchdog restarts it every third of it.
  std::chrono::milliseconds watchdog_lease() const { return detail::watchdog_lease(*core_); }
  /// Restarts `owner`'s hold at `lease` from now, if `owner` still holds the lock (the watchdog's
  /// renewal script): what multi_lock and red_lock do to their members once all are held. A hold the
  /// watchdog renews stays under the watchdog (its next renewal restarts the watchdog's lease); a
  /// fixed lease's deadline on the client (async_valid_for) restarts from this request's send time.
  /// Signature: void(std::error_code, bool held).
  template <typename Token>
  auto async_set_lease(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return run<result_bool>(std::forward<Token>(token), [names = names_, owner, lease](auto& core, auto& c) {
      return start_query(core, names, lock_query::set_lease, owner, c, lease.count());
    });
  }

 protected:

  lock_base(std::shared_ptr<client_core> core, executor_type ex, std::shared_ptr<const lock_names> names)
      : core_(std::move(core)), executor_(std::move(ex)), names_(std::move(names)) {}

  template <typename Result, typename Token, typename Start>
  auto run(Token&& token, Start&& start) {
    return async_run<Result>(core_, executor_, std::forward<Token>(token), std::forward<Start>(start));
  }
  template <typename Result, typename Token>
  auto query(lock_query q, owner_id owner, Token&& token) {
    return run<Result>(std::forward<Token>(token), [names = names_, q, owner](auto& core, auto& c) {
      return start_query(core, names, q, owner, c);
    });
  }
  template <typename Result, typename Token>
  auto acquire(owner_id owner, std::int64_t wait_ms, std::chrono::milliseconds lease, Token&& token) {
    return run<Result>(std::forward<Token>(token), [names = names_, owner, wait_ms, lease](auto& core, auto& c) {
      return start_acquire(core, names, owner, wait_ms, lease.count(), c);
    });
  }

  std::shared_ptr<client_core> core_;
  executor_type executor_;
  std::shared_ptr<const lock_names> names_;
};

/// Acquisition for the kinds that answer "acquired or not" (all but the fenced lock); `Kind` selects
/// the scripts and how a waiter waits. `backoff` matters only to the spin lock.
template <lock_kind Kind>
class flag_lock : public lock_base {
 public:
  /// Waits as long as it takes. Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, Token&& token) {
    return async_lock(owner, std::chrono::milliseconds(0), std::forward<Token>(token));
  }
  /// Waits as long as it takes; holds for `lease` (zero: watchdog). Signature: void(std::error_code).
  template <typename Token>
  auto async_lock(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return acquire<result_void>(owner, -1, lease, std::forward<Token>(token));
  }
  /// One attempt, no waiting. Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_lock(owner_id owner, Token&& token) {
    return async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::milliseconds(0),
                          std::forward<Token>(token));
  }
  /// Waits up to `wait` (negative: as long as it takes); holds for `lease` (zero: watchdog). An
  /// attempt in flight when `wait` runs out gets up to config::command_timeout more for its reply;
  /// if that is lost, the wait ends with errc::outcome_unknown rather than checking the attempt
  /// (a single attempt, `wait` 0, checks it). Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_lock(owner_id owner, std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                      Token&& token) {
    return acquire<result_bool>(owner, wait.count() < 0 ? -1 : wait.count(), lease,
                                std::forward<Token>(token));
  }

 protected:
  flag_lock(std::shared_ptr<client_core> core, executor_type ex, std::string_view name,
            const spin_backoff& backoff = {})
      : lock_base(std::move(core), std::move(ex), make_lock_names<Kind>(name, backoff)) {}
};

}  // namespace detail

/// A handle to one named reentrant lock. Cheap to copy; every copy talks to the same client. All
/// operations take Asio completion tokens (callbacks, asio::use_future, asio::use_awaitable, ...) and
/// acquisition supports per-operation cancellation of its wait (a hold the cancelled attempt got
/// anyway is released before the handler runs).
///
/// Leases: an acquisition given a lease holds the lock for exactly that long unless unlocked. Without a
/// lease (or with a zero lease) the lock uses config::watchdog_timeout and the client's watchdog
/// renews it every third of that until unlock; if renewal finds the lock gone, the client's lease-lost
/// handler is told.
class reentrant_lock : public detail::flag_lock<detail::lock_kind::reentrant> {
 private:
  friend class client;
  reentrant_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : flag_lock(std::move(core), std::move(ex), name) {}
};

/// A reentrant lock whose every acquisition (reentrant ones too) returns a fencing token: a number
/// that strictly increases across all clients, Java ones included. Hand it to the resource you
/// protect and let it reject writes carrying a smaller token than it has seen: that stops a holder
/// whose lease lapsed (a long GC pause, a partition) from doing damage.
class fenced_lock : public detail::lock_base {
 public:
  /// Waits as long as it takes; `lease` zero means the watchdog.
  /// Signature: void(std::error_code, std::uint64_t token).
  template <typename Token>
  auto async_lock(owner_id owner, std::chrono::milliseconds lease, Token&& token) {
    return acquire<detail::result_token>(owner, -1, lease, std::forward<Token>(token));
  }
  template <typename Token>
  auto async_lock(owner_id owner, Token&& token) {
    return async_lock(owner, std::chrono::milliseconds(0), std::forward<Token>(token));
  }
  /// Waits up to `wait` (negative: as long as it takes). Signature:
  /// void(std::error_code, std::optional<std::uint64_t> token) — empty when the wait ran out.
  template <typename Token>
  auto async_try_lock(owner_id owner, std::chrono::milliseconds wait, std::chrono::milliseconds lease,
                      Token&& token) {
    return acquire<detail::result_optional_token>(owner, wait.count() < 0 ? -1 : wait.count(), lease,
                                                  std::forward<Token>(token));
  }
  template <typename Token>
  auto async_try_lock(owner_id owner, Token&& token) {
    return async_try_lock(owner, std::chrono::milliseconds(0), std::chrono::milliseconds(0),
                          std::forward<Token>(token));
  }
  /// The last token handed out (0 if none yet). Signature: void(std::error_code, std::int64_t).
  template <typename Token>
  auto async_token(Token&& token) {
    return query<detail::result_int>(detail::lock_query::fencing_token, 0, std::forward<Token>(token));
  }

 private:
  friend class client;
  fenced_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : lock_base(std::move(core), std::move(ex), detail::make_lock_names<detail::lock_kind::fenced>(name)) {}
};

/// A spin lock (Redisson RSpinLock, docs/protocol.md §5): the reentrant lock's hash and acquire script, so
/// it excludes a reentrant_lock of the same name, but no pub/sub at all. A waiter backs off
/// (`spin_backoff`) and tries again; unlock publishes nothing (so it does not wake reentrant_lock
/// waiters: they re-check after the holder's TTL) and force unlock is a plain DEL. Use it where
/// PUBLISH is costly (a big cluster's bus) and locks are held briefly. Leases as reentrant_lock.
class spin_lock : public detail::flag_lock<detail::lock_kind::spin> {
 public:
  const spin_backoff& backoff() const noexcept { return names_->backoff; }

 private:
  friend class client;
  spin_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name,
            const spin_backoff& backoff)
      : flag_lock(std::move(core), std::move(ex), name, backoff) {}
};

}  // namespace deadbolt
