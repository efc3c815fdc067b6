// Redisson's count-down latch (RCountDownLatch, docs/protocol.md §10), wire-compatible: the count is the
// STRING `name`; reaching zero deletes it and publishes "0" on
// `redisson_countdownlatch__channel__{name}` (braces always added), setting a count publishes "1".
#pragma once

#include <chrono>
#include <cstdint>
#include <utility>

#include "deadbolt/detail/counter_engine.hpp"

namespace deadbolt {

class client;

/// A handle to one named latch. Cheap to copy. Awaiting supports per-operation cancellation.
class count_down_latch : public detail::counter_base {
 public:
  /// Sets the count if the latch does not exist (is not counting). Signature: void(std::error_code, bool set).
  template <typename Token>
  auto async_try_set_count(std::int64_t count_value, Token&& token) {
    return run<detail::result_bool>(detail::counter_call::latch_try_set, count(count_value), std::forward<Token>(token));
  }
  /// Counts down by one; at zero the latch is deleted and every awaiter released.
  /// Signature: void(std::error_code, std::int64_t new_count) (0 or less: released).
  template <typename Token>
  auto async_count_down(Token&& token) {
    return run<detail::result_int>(detail::counter_call::latch_count_down, {}, std::forward<Token>(token));
  }
  /// Signature: void(std::error_code, std::int64_t count) (0 if the latch does not exist).
  template <typename Token>
  auto async_count(Token&& token) {
    return run<detail::result_int>(detail::counter_call::latch_count, {}, std::forward<Token>(token));
  }
  /// Waits until the count is zero, as long as it takes. Signature: void(std::error_code).
  template <typename Token>
  auto async_await(Token&& token) {
    return await<detail::result_void>(-1, std::forward<Token>(token));
  }
  /// Waits up to `wait` (negative: as long as it takes). Signature: void(std::error_code, bool reached_zero).
  template <typename Token>
  auto async_await(std::chrono::milliseconds wait, Token&& token) {
    return await<detail::result_bool>(wait_arg(wait), std::forward<Token>(token));
  }
  /// Deletes the latch: its count is 0 then, so awaiters are released.
  /// Signature: void(std::error_code, bool existed).
  template <typename Token>
  auto async_delete(Token&& token) {
    return run<detail::result_bool>(detail::counter_call::latch_delete, {}, std::forward<Token>(token));
  }

 private:
  friend class client;
  count_down_latch(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : counter_base(std::move(core), std::move(ex), name, detail::counter_kind::latch) {}

  template <typename Result, typename Token>
  auto await(std::int64_t wait_ms, Token&& token) {
    detail::counter_args a;
    a.wait_ms = wait_ms;
    return run<Result>(detail::counter_call::latch_await, a, std::forward<Token>(token));
  }
};

}  // namespace deadbolt
