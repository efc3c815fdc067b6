// The blocking facade's way onto a client's event loop (src/blocking.cpp, src/lock/blocking_multi_lock.cpp).
// A blocking call posts its operation to the loop and waits: made on the loop's own thread (from a
// completion or lease-lost handler) it would wait for itself, and made through a handle that outlived
// its blocking_client it would post into a destroyed io_context. The gate refuses both.
#pragma once

#include <mutex>
#include <system_error>
#include <thread>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

struct blocking_gate {
  std::mutex mutex;
  bool open = true;              ///< false once the blocking_client is being destroyed
  std::thread::id loop_thread;   ///< the thread running the client's loop (none for async clients)
};

/// Runs `post` (which hands work to the loop) unless the call must fail: errc::would_deadlock on the
/// loop's thread, errc::shutting_down once the client is gone. The lock keeps the loop alive while
/// `post` runs.
template <typename Post>
std::error_code through_gate(blocking_gate& gate, Post&& post) {
  std::lock_guard<std::mutex> hold(gate.mutex);
  if (!gate.open) return errc::shutting_down;  // first: a later thread may reuse the loop's id
  if (std::this_thread::get_id() == gate.loop_thread) return errc::would_deadlock;
  post();
  return {};
}

/// Closes the gate: later blocking calls fail with errc::shutting_down.
inline void close_gate(blocking_gate& gate) {
  std::lock_guard<std::mutex> hold(gate.mutex);
  gate.open = false;
}

}  // namespace deadbolt::detail
