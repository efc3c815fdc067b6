// The blocking composites: the async multi_lock / red_lock over the members' async handles, each call
// run with the blocking token through every member client's gate.
#include "deadbolt/blocking_multi_lock.hpp"

#include <algorithm>
#include <utility>

#include "blocking/blocking_call.hpp"

namespace deadbolt::detail {
namespace {

std::vector<reentrant_lock> async_members(const std::vector<blocking_lock>& locks) {
  std::vector<reentrant_lock> out;
  out.reserve(locks.size());
  for (const auto& l : locks) out.push_back(l.async_handle());
  return out;
}

std::int64_t as_value(bool acquired) { return acquired ? 1 : 0; }
std::int64_t as_value(std::chrono::milliseconds validity) { return validity.count(); }

}  // namespace

template <typename AsyncMulti>
blocking_multi_base<AsyncMulti>::blocking_multi_base(std::vector<blocking_lock> locks)
    : async_(async_members(locks)) {
  for (const auto& l : locks) gates_.push_back(l.gate());
  // Address order, so two composites over the same clients take the gates in the same order.
  std::sort(gates_.begin(), gates_.end());
  gates_.erase(std::unique(gates_.begin(), gates_.end()), gates_.end());
  for (const auto& g : gates_) gate_list_.push_back(g.get());
}

template <typename AsyncMulti>
std::int64_t blocking_multi_base<AsyncMulti>::acquire(std::int64_t wait_ms, std::int64_t lease_ms,
                                                      std::error_code& ec) {
  return as_value(async_.async_try_lock(calling_thread(), timed_wait(wait_ms), std::chrono::milliseconds(lease_ms),
                                        blocking_token(gate_list_.data(), gate_list_.size(), ec)));
}

template <typename AsyncMulti>
bool blocking_multi_base<AsyncMulti>::try_acquire_or_throw(std::int64_t wait_ms) {
  std::error_code ec;
  const std::int64_t got = acquire(wait_ms, 0, ec);
  if (ec) raise(ec, "deadbolt: try_lock of a multi lock");
  return got > 0;
}

template <typename AsyncMulti>
void blocking_multi_base<AsyncMulti>::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  async_.async_lock(calling_thread(), lease, blocking_token(gate_list_.data(), gate_list_.size(), ec));
}

template <typename AsyncMulti>
void blocking_multi_base<AsyncMulti>::lock(std::chrono::milliseconds lease) {
  std::error_code ec;
  lock(lease, ec);
  if (ec) raise(ec, "deadbolt: lock of a multi lock");
}

template <typename AsyncMulti>
bool blocking_multi_base<AsyncMulti>::try_lock() {
  return try_acquire_or_throw(0);
}

template <typename AsyncMulti>
std::vector<std::error_code> blocking_multi_base<AsyncMulti>::unlock(std::error_code& ec) noexcept {
  return async_.async_unlock(calling_thread(), blocking_token(gate_list_.data(), gate_list_.size(), ec));
}

template <typename AsyncMulti>
std::chrono::milliseconds blocking_multi_base<AsyncMulti>::valid_for() {
  std::error_code ec;  // answered locally: fails only when a member's client is gone
  return async_.async_valid_for(calling_thread(), blocking_token(gate_list_.data(), gate_list_.size(), ec));
}

template <typename AsyncMulti>
void blocking_multi_base<AsyncMulti>::unlock() noexcept {
  std::error_code ignored;  // as blocking_lock::unlock(): use unlock(ec) to see the outcome
  unlock(ignored);
}

template class blocking_multi_base<multi_lock>;
template class blocking_multi_base<red_lock>;

}  // namespace deadbolt::detail
