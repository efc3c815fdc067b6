// Redisson's semaphore (RSemaphore, docs/protocol.md §8), wire-compatible: the permits are the STRING
// `name`, releases publish the new count on `redisson_sc:{name}`. No owner: anyone may release.
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "deadbolt/detail/counter_engine.hpp"

namespace deadbolt {

class client;

/// A handle to one named semaphore. Cheap to copy. Operations take Asio completion tokens; a waiting
/// acquire supports per-operation cancellation (a permit taken meanwhile is given back before the
/// handler runs). A missing key means 0 permits: set them with async_try_set_permits or
/// async_add_permits first.
class semaphore : public detail::counter_base {
 public:
  /// Takes `permits`, waiting as long as it takes. Signature: void(std::error_code).
  template <typename Token>
  auto async_acquire(std::int64_t permits, Token&& token) {
    return acquire<detail::result_void>(permits, -1, std::forward<Token>(token));
  }
  /// One attempt, no waiting. Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_acquire(std::int64_t permits, Token&& token) {
    return acquire<detail::result_bool>(permits, 0, std::forward<Token>(token));
  }
  /// Waits up to `wait` (negative: as long as it takes). Signature: void(std::error_code, bool acquired).
  template <typename Token>
  auto async_try_acquire(std::int64_t permits, std::chrono::milliseconds wait, Token&& token) {
    return acquire<detail::result_bool>(permits, wait_arg(wait), std::forward<Token>(token));
  }
  /// Gives `permits` back (whoever took them) and wakes waiters. Signature: void(std::error_code).
  template <typename Token>
  auto async_release(std::int64_t permits, Token&& token) {
    return run<detail::result_void>(detail::counter_call::sem_release, count(permits), std::forward<Token>(token));
  }
  /// Sets the permits if the semaphore does not exist yet. Signature: void(std::error_code, bool set).
  template <typename Token>
  auto async_try_set_permits(std::int64_t permits, Token&& token) {
    return run<detail::result_bool>(detail::counter_call::sem_try_set, count(permits), std::forward<Token>(token));
  }
  /// Adds `permits` (negative: removes). Signature: void(std::error_code, std::int64_t available).
  template <typename Token>
  auto async_add_permits(std::int64_t permits, Token&& token) {
    return run<detail::result_int>(detail::counter_call::sem_add, count(permits), std::forward<Token>(token));
  }
  /// Takes every available permit. Signature: void(std::error_code, std::int64_t taken).
  template <typename Token>
  auto async_drain_permits(Token&& token) {
    return run<detail::result_int>(detail::counter_call::sem_drain, {}, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, std::int64_t available).
  template <typename Token>
  auto async_available_permits(Token&& token) {
    return run<detail::result_int>(detail::counter_call::sem_available, {}, std::forward<Token>(token));
  }

 private:
  friend class client;
  semaphore(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : counter_base(std::move(core), std::move(ex), name, detail::counter_kind::semaphore) {}

  template <typename Result, typename Token>
  auto acquire(std::int64_t permits, std::int64_t wait_ms, Token&& token) {
    detail::counter_args a = count(permits);
    a.wait_ms = wait_ms;
    return run<Result>(detail::counter_call::sem_acquire, a, std::forward<Token>(token));
  }
};

}  // namespace deadbolt
