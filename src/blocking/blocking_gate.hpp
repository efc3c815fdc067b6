// The blocking facade's way onto a blocking_client's event loop (src/blocking/blocking_token.hpp). A
// blocking call starts its operation on the loop and waits: made on the loop's own thread (from a
// completion or lease-lost handler) it would wait for itself, and made through a handle that outlived
// its blocking_client it would post into a destroyed io_context. The gate refuses both. The client and
// its blocking handles share it.
#pragma once

#include <cstddef>
#include <mutex>
#include <system_error>
#include <thread>
#include <utility>

#include "deadbolt/error.hpp"
#include "deadbolt/port/asio_core.hpp"

namespace deadbolt::detail {

struct blocking_gate {
  explicit blocking_gate(asio::io_context::executor_type l) : loop(std::move(l)) {}

  std::mutex mutex;
  bool open = true;              ///< false once the blocking_client is being destroyed
  std::thread::id loop_thread;   ///< the thread running the client's loop
  asio::io_context::executor_type loop;  ///< where blocking calls start their operations
};

/// Runs `start` (which hands work to the loops) with every gate of `gates` held, unless the call must
/// fail: errc::shutting_down if a client is gone, errc::would_deadlock on a loop's own thread. Holding
/// the gates keeps the loops alive while `start` runs. `gates` are in address order without
/// duplicates, so two calls over the same clients cannot wait for each other.
template <typename Start>
std::error_code through_gates(blocking_gate* const* gates, std::size_t n, Start&& start) {
  struct held {
    blocking_gate* const* gates;
    std::size_t n = 0;
    ~held() {
      while (n > 0) gates[--n]->mutex.unlock();
    }
  } hold{gates};
  for (; hold.n < n; ++hold.n) gates[hold.n]->mutex.lock();
  for (std::size_t i = 0; i < n; ++i) {
    if (!gates[i]->open) return errc::shutting_down;  // first: a later thread may reuse a loop's id
  }
  for (std::size_t i = 0; i < n; ++i) {
    if (std::this_thread::get_id() == gates[i]->loop_thread) return errc::would_deadlock;
  }
  start();
  return {};
}

/// Closes the gate: later blocking calls fail with errc::shutting_down.
inline void close_gate(blocking_gate& gate) {
  std::lock_guard<std::mutex> hold(gate.mutex);
  gate.open = false;
}

}  // namespace deadbolt::detail
