// The watchdog: renews the holds that have no fixed lease every third of config::watchdog_timeout,
// in batched script calls (at most renew_batch::max_keys holds each). A batch holds one route's keys
// only (one script call may only touch keys one server serves, and on a cluster or any endpoint that
// enforces hash slots, one slot), and one renewal kind; how a batch is written is the lock side's
// business (src/lock/renewal.cpp). Batches go out a few at a time per node, in the order they were
// built (src/engine/renewal_windows.hpp): a node that does not answer delays no other node's
// renewals, and no hold waits behind holds queued after it. Every run also ends the holds whose
// deadline on the client has passed (holds.hpp: valid_until(), the watchdog's and fixed leases alike),
// and the timer is armed for the earliest of the next renewal and the next deadline: one timer for
// every hold, re-armed only when a new deadline comes before the armed run. A renewal answered after
// the hold's deadline does not bring it back: the client stopped counting on it at the deadline. A
// batch the server refuses is a renewal failure (metrics and log, with the server's reason); one
// refused with CROSSSLOT teaches the topology that the endpoint enforces slots, and the holds are
// renewed again at once, slot by slot.
#pragma once

#include <cstdint>
#include <string_view>

#include "deadbolt/port/asio_core.hpp"
#include "engine/op_context.hpp"
#include "engine/renewal_windows.hpp"
#include "memory/op_pool.hpp"

namespace deadbolt::detail {

class renew_batch;

class watchdog {
 public:
  /// What the watchdog needs of its client beyond what an operation sees (client_core is it).
  class host {
   public:
    /// The hold's lease is lost: the client stops counting on it and tells its owner.
    virtual void lease_lost(std::uint32_t hold_index) = 0;
    /// Which keys may share a script call, and the node that serves a key (topology::route_of(),
    /// topology::node_of()).
    virtual std::uint32_t route_of(std::string_view key) const = 0;
    virtual std::uint32_t node_of(std::string_view key) const = 0;
    /// A batch was refused for mixing hash slots: true if routes tell slots apart from now on, and did
    /// not before (topology::cross_slot_refused()).
    virtual bool cross_slot_refused() = 0;

   protected:
    ~host() = default;
  };

  /// `nodes`: how many nodes the topology can name (a window each). `ctx` and `client` are the same
  /// client, which owns the watchdog.
  watchdog(op_context& ctx, host& client, const asio::any_io_executor& ex, std::size_t nodes);
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  /// A hold's deadline (monotonic ns): a run comes by then. Re-arms only if the armed run is later.
  void watch(std::int64_t deadline_ns, std::int64_t now_ns);
  /// A hold the watchdog renews: if no renewal is planned, the next is a third of the lease from now.
  void renew_from(std::int64_t now_ns);
  /// No more runs; batches in flight still complete.
  void stop();
  /// A batch has been answered (or failed): send the next one waiting for its node.
  void batch_done(renew_batch* b);
  /// The server refused a batch because its keys were in different hash slots (CROSSSLOT). If that
  /// taught the topology to tell slots apart, the batches not sent yet are built again and sent now.
  void cross_slot_refused();

 private:
  /// Ends the holds past their deadline; renews the watchdog's holds if it is time (or `renew_now`).
  void run(bool renew_now = false);
  void arm_at(std::int64_t at_ns, std::int64_t now_ns);
  /// Sends what waits for `node`, while its window has free places.
  void send_waiting(std::uint32_t node);
  /// The same for every node.
  void send_waiting();

  friend class renew_batch;
  std::int64_t third_of_lease_ns() const;

  op_context& ctx_;
  host& host_;
  asio::steady_timer timer_;
  bool armed_ = false;
  std::int64_t armed_at_ns_ = 0;  // when the armed run comes (monotonic ns)
  std::int64_t renew_at_ns_ = 0;  // when the next renewal is due; 0: none (no hold under the watchdog)
  bool stopped_ = false;
  op_pool<renew_batch> batches_;
  // Per node: a few batches at a time, so that 10,000 held locks do not turn into one 700 KB write that
  // keeps the server busy for tens of milliseconds and the output buffer large ever after.
  static constexpr int max_in_flight_per_node = 4;
  renewal_windows windows_;
};

}  // namespace deadbolt::detail
