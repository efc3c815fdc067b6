#include "deadbolt/blocking_multi_lock.hpp"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <string>
#include <utility>

#include "deadbolt/port/hooks.hpp"
#include "detail/client_core.hpp"
#include "lock/lock_access.hpp"
#if defined(__cpp_exceptions)
#include <system_error>
#endif

namespace deadbolt::detail {
namespace {

// The calling thread waits here for the composite's completion (which runs on a loop thread).
template <typename Value>
class blocking_result {
 public:
  void set(std::error_code ec, Value v) {
    std::lock_guard<std::mutex> guard(mutex_);
    ec_ = ec;
    value_ = std::move(v);
    done_ = true;
    ready_.notify_one();
  }
  Value wait(std::error_code& ec) {
    std::unique_lock<std::mutex> guard(mutex_);
    ready_.wait(guard, [this] { return done_; });
    ec = ec_;
    return std::move(value_);
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  std::error_code ec_;
  Value value_{};
};

[[noreturn]] void raise(std::error_code ec, const std::string& what) {
#if defined(__cpp_exceptions)
  throw std::system_error(ec, what);
#else
  port::fatal((what + ": " + ec.message()).c_str());
#endif
}

owner_id calling_thread() { return static_cast<owner_id>(port::thread_id()); }

std::vector<reentrant_lock> async_locks(const std::vector<blocking_lock>& locks) {
  std::vector<reentrant_lock> out;
  out.reserve(locks.size());
  for (const auto& l : locks) out.push_back(lock_access::async_lock_of(l));
  return out;
}

}  // namespace

blocking_multi_base::blocking_multi_base(std::vector<blocking_lock> locks, multi_kind kind) {
  auto members = async_locks(locks);
  for (const auto& m : members) member_cores_.push_back(lock_access::core(m));
  std::sort(member_cores_.begin(), member_cores_.end());
  member_cores_.erase(std::unique(member_cores_.begin(), member_cores_.end()), member_cores_.end());
  asio::any_io_executor ex =
      members.empty() ? asio::any_io_executor(asio::system_executor()) : members.front().get_executor();
  core_ = make_multi_core(std::move(ex), std::move(members), kind);
}

// Every member's gate (src/detail/blocking_gate.hpp), taken in address order so two composites over
// the same clients cannot wait for each other.
template <typename Start>
std::error_code blocking_multi_base::enter(Start&& start) {
  std::vector<std::unique_lock<std::mutex>> held;
  held.reserve(member_cores_.size());
  for (const auto& core : member_cores_) {
    held.emplace_back(core->gate.mutex);
    if (!core->gate.open) return errc::shutting_down;
  }
  for (const auto& core : member_cores_) {
    if (std::this_thread::get_id() == core->gate.loop_thread) return errc::would_deadlock;
  }
  start();
  return {};
}

std::int64_t blocking_multi_base::acquire(std::int64_t wait_ms, std::int64_t lease_ms, bool until_acquired,
                                          std::error_code& ec) {
  auto w = std::make_shared<blocking_result<std::int64_t>>();
  ec = enter([&] {
    multi_acquire(core_, calling_thread(), wait_ms, lease_ms, until_acquired, {},
                  [w](std::error_code e, std::int64_t v) { w->set(e, v); });
  });
  if (ec) return 0;
  return w->wait(ec);
}

bool blocking_multi_base::try_acquire_or_throw(std::int64_t wait_ms) {
  std::error_code ec;
  const std::int64_t got = acquire(wait_ms < 0 ? 0 : wait_ms, 0, false, ec);  // non-positive: one attempt
  if (ec) raise(ec, "deadbolt: try_lock of a multi lock");
  return got > 0;
}

void blocking_multi_base::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  acquire(0, lease.count(), true, ec);
}

void blocking_multi_base::lock(std::chrono::milliseconds lease) {
  std::error_code ec;
  acquire(0, lease.count(), true, ec);
  if (ec) raise(ec, "deadbolt: lock of a multi lock");
}

bool blocking_multi_base::try_lock() { return try_acquire_or_throw(0); }

std::vector<std::error_code> blocking_multi_base::unlock(std::error_code& ec) noexcept {
  auto w = std::make_shared<blocking_result<std::vector<std::error_code>>>();
  ec = enter([&] {
    multi_unlock(core_, calling_thread(),
                 [w](std::error_code e, std::vector<std::error_code> each) { w->set(e, std::move(each)); });
  });
  if (ec) return {};
  return w->wait(ec);
}

void blocking_multi_base::unlock() noexcept {
  std::error_code ignored;  // as blocking_lock::unlock(): use unlock(ec) to see the outcome
  unlock(ignored);
}

}  // namespace deadbolt::detail
