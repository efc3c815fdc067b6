// An any_io_executor that knows its blocking property, for a strand to wrap. Asio's strand asks its
// executor for execution::blocking on every dispatch, and an any_io_executor answers that query with
// a heap allocation (Asio 1.22: the polymorphic result is new'd); this wrapper answers it from a
// flag, so dispatching to the strand does not allocate. It also names the per-thread block cache as
// its allocator, which the strand then uses for the handlers it queues (with an any_io_executor it
// used Asio's two-block recycling cache, which several completions queued at once outgrow).
// Everything else goes to the wrapped executor.
#pragma once

#include <utility>

#include "deadbolt/detail/block_cache.hpp"
#include "deadbolt/port/asio_config.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/execution.hpp>
#include <asio/prefer.hpp>
#include <asio/query.hpp>
#include <asio/require.hpp>

namespace deadbolt::detail {

class known_blocking_executor {
 public:
  static known_blocking_executor wrap(asio::any_io_executor ex) {
    const bool never = asio::query(ex, asio::execution::blocking) == asio::execution::blocking.never;
    return known_blocking_executor(std::move(ex), never);
  }

  asio::execution_context& query(asio::execution::context_t) const noexcept {
    return asio::query(ex_, asio::execution::context);
  }
  asio::execution::blocking_t query(asio::execution::blocking_t) const noexcept {
    if (never_) return asio::execution::blocking.never;
    return asio::execution::blocking.possibly;
  }
  cached_allocator<void> query(asio::execution::allocator_t<void>) const noexcept { return {}; }

  known_blocking_executor require(asio::execution::blocking_t::never_t p) const {
    return known_blocking_executor(asio::require(ex_, p), true);
  }
  // Keeps `never` if it was required: the strand then queues rather than runs inline, the safe side.
  known_blocking_executor prefer(asio::execution::blocking_t::possibly_t p) const {
    return known_blocking_executor(asio::prefer(ex_, p), never_);
  }
  known_blocking_executor prefer(asio::execution::outstanding_work_t::tracked_t p) const {
    return known_blocking_executor(asio::prefer(ex_, p), never_);
  }
  known_blocking_executor prefer(asio::execution::outstanding_work_t::untracked_t p) const {
    return known_blocking_executor(asio::prefer(ex_, p), never_);
  }
  known_blocking_executor prefer(asio::execution::relationship_t::fork_t p) const {
    return known_blocking_executor(asio::prefer(ex_, p), never_);
  }
  known_blocking_executor prefer(asio::execution::relationship_t::continuation_t p) const {
    return known_blocking_executor(asio::prefer(ex_, p), never_);
  }

  template <typename F>
  void execute(F&& f) const {
    ex_.execute(std::forward<F>(f));
  }

  friend bool operator==(const known_blocking_executor& a, const known_blocking_executor& b) noexcept {
    return a.ex_ == b.ex_;
  }
  friend bool operator!=(const known_blocking_executor& a, const known_blocking_executor& b) noexcept {
    return a.ex_ != b.ex_;
  }

 private:
  // Not a converting constructor: one from any_io_executor would make the type's own executor checks
  // recurse (any_io_executor asks whether this type is an executor).
  known_blocking_executor(asio::any_io_executor ex, bool never) : ex_(std::move(ex)), never_(never) {}

  asio::any_io_executor ex_;
  bool never_;
};

}  // namespace deadbolt::detail
