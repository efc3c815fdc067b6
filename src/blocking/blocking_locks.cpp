// The blocking locks: each call is its async handle's operation for the calling thread, run with the
// blocking token (src/blocking/blocking_token.hpp).
#include <utility>

#include "blocking/blocking_call.hpp"
#include "deadbolt/blocking.hpp"

namespace deadbolt {

using std::chrono::milliseconds;

// ---- what every kind shares ---------------------------------------------------------------------------

namespace detail {

template <typename Async>
void blocking_lock_base<Async>::unlock(std::error_code& ec) noexcept {
  this->async_.async_unlock(calling_thread(), through(this->gate_, ec));
}

template <typename Async>
void blocking_lock_base<Async>::unlock() noexcept {
  std::error_code ignored;  // the lock is released or already gone; nothing a caller of unlock() can do
  unlock(ignored);
}

template <typename Async>
bool blocking_lock_base<Async>::force_unlock(std::error_code& ec) {
  return this->async_.async_force_unlock(through(this->gate_, ec));
}

template <typename Async>
bool blocking_lock_base<Async>::is_locked(std::error_code& ec) {
  return this->async_.async_is_locked(through(this->gate_, ec));
}

template <typename Async>
std::int64_t blocking_lock_base<Async>::hold_count(std::error_code& ec) {
  return this->async_.async_hold_count(calling_thread(), through(this->gate_, ec));
}

template <typename Async>
bool blocking_lock_base<Async>::lease_lost() {
  std::error_code ec;
  return this->async_.async_lease_lost(calling_thread(), through(this->gate_, ec));
}

template <typename Async>
milliseconds blocking_lock_base<Async>::valid_for() {
  std::error_code ec;  // answered locally: fails only when the client is gone, and then nothing is valid
  return this->async_.async_valid_for(calling_thread(), through(this->gate_, ec));
}

template class blocking_lock_base<reentrant_lock>;
template class blocking_lock_base<deadbolt::fair_lock>;
template class blocking_lock_base<read_lock>;
template class blocking_lock_base<write_lock>;
template class blocking_lock_base<deadbolt::fenced_lock>;

}  // namespace detail

// ---- blocking_lock and the other flag kinds ---------------------------------------------------------------

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec) {
  return this->async_.async_try_lock(detail::calling_thread(), detail::timed_wait(wait_ms), milliseconds(lease_ms),
                                     detail::through(this->gate_, ec));
}

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_acquire_or_throw(std::int64_t wait_ms) {
  return detail::or_raise("try_lock", this->name(), [&](std::error_code& ec) { return try_acquire(wait_ms, 0, ec); });
}

template <detail::lock_kind Kind>
void basic_blocking_lock<Kind>::lock(milliseconds lease, std::error_code& ec) {
  this->async_.async_lock(detail::calling_thread(), lease, detail::through(this->gate_, ec));
}

template <detail::lock_kind Kind>
void basic_blocking_lock<Kind>::lock(milliseconds lease) {
  detail::or_raise("lock", this->name(), [&](std::error_code& ec) { lock(lease, ec); });
}

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_lock() {
  return try_acquire_or_throw(0);
}

template class basic_blocking_lock<detail::lock_kind::reentrant>;
template class basic_blocking_lock<detail::lock_kind::fair>;
template class basic_blocking_lock<detail::lock_kind::read>;
template class basic_blocking_lock<detail::lock_kind::write>;

// ---- blocking_fenced_lock ---------------------------------------------------------------------------

std::optional<std::uint64_t> blocking_fenced_lock::try_acquire(std::int64_t wait_ms, std::int64_t lease_ms,
                                                               std::error_code& ec) {
  const std::optional<std::uint64_t> token = async_.async_try_lock(
      detail::calling_thread(), detail::timed_wait(wait_ms), milliseconds(lease_ms), detail::through(gate_, ec));
  return ec ? std::nullopt : token;
}

std::optional<std::uint64_t> blocking_fenced_lock::try_acquire_or_throw(std::int64_t wait_ms) {
  return detail::or_raise("try_lock", name(), [&](std::error_code& ec) { return try_acquire(wait_ms, 0, ec); });
}

std::uint64_t blocking_fenced_lock::lock(milliseconds lease, std::error_code& ec) {
  const std::uint64_t token = async_.async_lock(detail::calling_thread(), lease, detail::through(gate_, ec));
  return ec ? 0 : token;
}

std::uint64_t blocking_fenced_lock::lock(milliseconds lease) {
  return detail::or_raise("lock", name(), [&](std::error_code& ec) { return lock(lease, ec); });
}

std::optional<std::uint64_t> blocking_fenced_lock::try_lock() { return try_acquire_or_throw(0); }

std::uint64_t blocking_fenced_lock::token(std::error_code& ec) {
  const std::int64_t v = async_.async_token(detail::through(gate_, ec));
  return ec || v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

}  // namespace deadbolt
