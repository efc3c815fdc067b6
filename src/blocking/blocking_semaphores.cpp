// The blocking semaphores and latch: each call is its async handle's operation, run with the blocking
// token (src/blocking/blocking_token.hpp).
#include "blocking/blocking_call.hpp"
#include "blocking/blocking_client_loop.hpp"
#include "deadbolt/blocking.hpp"

namespace deadbolt {

using detail::or_raise;
using detail::through;
using detail::timed_wait;

// ---- the blocking client's factories (here, not in blocking_client.cpp: see blocking_client_loop.hpp)

blocking_semaphore blocking_client::semaphore(std::string_view name) {
  return {loop_->async->semaphore(name), loop_->gate};
}

blocking_expirable_semaphore blocking_client::expirable_semaphore(std::string_view name) {
  return {loop_->async->expirable_semaphore(name), loop_->gate};
}

blocking_count_down_latch blocking_client::count_down_latch(std::string_view name) {
  return {loop_->async->count_down_latch(name), loop_->gate};
}

// ---- blocking_semaphore -------------------------------------------------------------------------------

void blocking_semaphore::acquire(std::int64_t permits, std::error_code& ec) {
  async_.async_acquire(permits, through(gate_, ec));
}
void blocking_semaphore::acquire(std::int64_t permits) {
  or_raise("acquire", name(), [&](std::error_code& ec) { acquire(permits, ec); });
}
bool blocking_semaphore::try_acquire(std::int64_t permits, std::chrono::milliseconds wait, std::error_code& ec) {
  return async_.async_try_acquire(permits, timed_wait(wait.count()), through(gate_, ec));
}
bool blocking_semaphore::try_acquire_or_throw(std::int64_t permits, std::int64_t wait_ms) {
  return or_raise("try_acquire", name(), [&](std::error_code& ec) {
    return try_acquire(permits, std::chrono::milliseconds(wait_ms), ec);
  });
}
bool blocking_semaphore::try_acquire(std::int64_t permits) { return try_acquire_or_throw(permits, 0); }
void blocking_semaphore::release(std::int64_t permits, std::error_code& ec) {
  async_.async_release(permits, through(gate_, ec));
}
void blocking_semaphore::release(std::int64_t permits) {
  or_raise("release", name(), [&](std::error_code& ec) { release(permits, ec); });
}
bool blocking_semaphore::try_set_permits(std::int64_t permits, std::error_code& ec) {
  return async_.async_try_set_permits(permits, through(gate_, ec));
}
std::int64_t blocking_semaphore::add_permits(std::int64_t permits, std::error_code& ec) {
  return async_.async_add_permits(permits, through(gate_, ec));
}
std::int64_t blocking_semaphore::drain_permits(std::error_code& ec) {
  return async_.async_drain_permits(through(gate_, ec));
}
std::int64_t blocking_semaphore::available_permits(std::error_code& ec) {
  return async_.async_available_permits(through(gate_, ec));
}

// ---- blocking_expirable_semaphore -------------------------------------------------------------------------

permit_id blocking_expirable_semaphore::acquire(std::chrono::milliseconds lease, std::error_code& ec) {
  return async_.async_acquire(lease, through(gate_, ec));
}
permit_id blocking_expirable_semaphore::acquire(std::chrono::milliseconds lease) {
  return or_raise("acquire", name(), [&](std::error_code& ec) { return acquire(lease, ec); });
}
std::optional<permit_id> blocking_expirable_semaphore::try_acquire(std::chrono::milliseconds wait,
                                                                   std::chrono::milliseconds lease,
                                                                   std::error_code& ec) {
  return async_.async_try_acquire(timed_wait(wait.count()), lease, through(gate_, ec));
}
void blocking_expirable_semaphore::release(const permit_id& id, std::error_code& ec) {
  async_.async_release(id, through(gate_, ec));
}
void blocking_expirable_semaphore::release(const permit_id& id) {
  or_raise("release", name(), [&](std::error_code& ec) { release(id, ec); });
}
bool blocking_expirable_semaphore::try_release(const permit_id& id, std::error_code& ec) {
  return async_.async_try_release(id, through(gate_, ec));
}
bool blocking_expirable_semaphore::update_lease(const permit_id& id, std::chrono::milliseconds lease,
                                                std::error_code& ec) {
  return async_.async_update_lease(id, lease, through(gate_, ec));
}
bool blocking_expirable_semaphore::try_set_permits(std::int64_t permits, std::error_code& ec) {
  return async_.async_try_set_permits(permits, through(gate_, ec));
}
std::int64_t blocking_expirable_semaphore::add_permits(std::int64_t permits, std::error_code& ec) {
  return async_.async_add_permits(permits, through(gate_, ec));
}
std::int64_t blocking_expirable_semaphore::available_permits(std::error_code& ec) {
  return async_.async_available_permits(through(gate_, ec));
}

// ---- blocking_count_down_latch ---------------------------------------------------------------------------

bool blocking_count_down_latch::try_set_count(std::int64_t count_value, std::error_code& ec) {
  return async_.async_try_set_count(count_value, through(gate_, ec));
}
std::int64_t blocking_count_down_latch::count_down(std::error_code& ec) {
  return async_.async_count_down(through(gate_, ec));
}
std::int64_t blocking_count_down_latch::count_down() {
  return or_raise("count_down", name(), [&](std::error_code& ec) { return count_down(ec); });
}
std::int64_t blocking_count_down_latch::count(std::error_code& ec) { return async_.async_count(through(gate_, ec)); }
void blocking_count_down_latch::await(std::error_code& ec) { async_.async_await(through(gate_, ec)); }
void blocking_count_down_latch::await() {
  or_raise("await", name(), [&](std::error_code& ec) { await(ec); });
}
bool blocking_count_down_latch::await_for(std::chrono::milliseconds wait, std::error_code& ec) {
  return async_.async_await(timed_wait(wait.count()), through(gate_, ec));
}
bool blocking_count_down_latch::await_or_throw(std::int64_t wait_ms) {
  return or_raise("await", name(), [&](std::error_code& ec) {
    return await_for(std::chrono::milliseconds(wait_ms), ec);
  });
}
bool blocking_count_down_latch::delete_latch(std::error_code& ec) { return async_.async_delete(through(gate_, ec)); }

}  // namespace deadbolt
