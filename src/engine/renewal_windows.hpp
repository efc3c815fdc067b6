// Which renewal batch the watchdog sends next, as a sans-I/O core (tests/core/renewal_test.cpp). Each
// node has its own window of batches in flight and its own queue of batches waiting, in the order they
// were built:
//   - a node that does not answer (a shard that is down, a paused server) fills only its own window,
//     for command_timeout per batch: the other nodes' renewals go out regardless;
//   - a batch waits only behind the batches built before it for its node, so a run of the watchdog
//     never passes over the holds an earlier run had queued (they go first, and are not queued twice).
#pragma once

#include <cstdint>
#include <vector>

#include "pipeline/request.hpp"

namespace deadbolt::detail {

class renewal_windows {
 public:
  /// `nodes` windows (at least one) of `places` batches in flight each.
  renewal_windows(std::size_t nodes, int places);

  /// How many windows there are: node numbers from the topology beyond them share the last one.
  std::uint32_t nodes() const noexcept { return static_cast<std::uint32_t>(windows_.size()); }
  /// Queues `batch` for `node`, behind what waits there already.
  void push(std::uint32_t node, request& batch) noexcept { at(node).waiting.push_back(batch); }
  /// The next batch to send on `node` if its window has a free place, else null. The caller sends it
  /// and calls sent(node), or drops it (nothing was left in it to renew).
  request* take(std::uint32_t node) noexcept;
  /// The batch take() gave out was sent: it holds a place until done(node).
  void sent(std::uint32_t node) noexcept { ++at(node).in_flight; }
  /// A batch sent on `node` completed (answered or failed): its place is free.
  void done(std::uint32_t node) noexcept;
  /// Any batch still waiting, whatever its window (to build them again, or to drop them); null if none.
  request* take_any_waiting() noexcept;

  int in_flight(std::uint32_t node) const noexcept { return at(node).in_flight; }

 private:
  struct window {
    request_queue waiting;
    int in_flight = 0;
  };
  window& at(std::uint32_t node) noexcept { return windows_[node < windows_.size() ? node : windows_.size() - 1]; }
  const window& at(std::uint32_t node) const noexcept {
    return windows_[node < windows_.size() ? node : windows_.size() - 1];
  }

  std::vector<window> windows_;
  int places_;
};

}  // namespace deadbolt::detail
