// What every blocking call shares (src/blocking_*.cpp, src/blocking/blocking_multi_lock.cpp): the owner is
// the calling thread, a timed wait that is not positive is one attempt, the plain forms throw.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>

#include "blocking/blocking_token.hpp"
#include "deadbolt/port/hooks.hpp"
#include "deadbolt/reentrant_lock.hpp"

namespace deadbolt::detail {

/// The owner of a blocking call: the calling thread (reentrant per thread, as Redisson in Java).
inline owner_id calling_thread() { return static_cast<owner_id>(port::thread_id()); }

/// A timed wait of the blocking API: a non-positive one is exactly one attempt (std::timed_mutex's
/// rule). Waiting without end is only ever asked for explicitly (lock(), acquire(), await()).
inline std::chrono::milliseconds timed_wait(std::int64_t wait_ms) {
  return std::chrono::milliseconds(wait_ms < 0 ? 0 : wait_ms);
}

/// The token of a call through one client's gate.
inline blocking_token through(const std::shared_ptr<blocking_gate>& gate, std::error_code& ec) {
  return blocking_token(*gate, ec);
}

/// The plain forms' error: std::system_error, or the port's fatal hook in builds without exceptions.
[[noreturn]] inline void raise(std::error_code ec, const std::string& what) {
#if defined(__cpp_exceptions)
  throw std::system_error(ec, what);
#else
  port::fatal((what + ": " + ec.message()).c_str());
#endif
}

/// Runs `call(ec)` and returns its value; raises "deadbolt: <what> <name>" on an error.
template <typename Call>
auto or_raise(const char* what, const std::string& name, Call&& call) {
  std::error_code ec;
  if constexpr (std::is_void_v<decltype(call(ec))>) {
    call(ec);
    if (ec) raise(ec, std::string("deadbolt: ") + what + " " + name);
  } else {
    auto value = call(ec);
    if (ec) raise(ec, std::string("deadbolt: ") + what + " " + name);
    return value;
  }
}

}  // namespace deadbolt::detail
