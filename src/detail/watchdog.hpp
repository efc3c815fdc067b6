// The watchdog: renews the holds that have no fixed lease every third of config::watchdog_timeout,
// in batched script calls (at most renew_batch::max_keys holds each, a few in flight at a time). A
// batch holds one route's keys only (one script call may only touch keys one server serves: on a
// cluster, one slot), and one renewal kind; how a batch is written is the lock side's business
// (src/lock/renewal.cpp). A hold not confirmed for a whole lease is declared lost.
#pragma once

#include <cstdint>
#include <deque>

#include "deadbolt/port/asio.hpp"
#include "detail/op_pool.hpp"

namespace deadbolt::detail {

class client_core;
class renew_batch;

class watchdog {
 public:
  explicit watchdog(client_core& core);
  watchdog(const watchdog&) = delete;
  watchdog& operator=(const watchdog&) = delete;

  /// Arms the next run: a third of the lease from now, or after `delay_ns` if given (no-op if armed).
  void arm(std::int64_t delay_ns = -1);
  /// No more runs; batches in flight still complete.
  void stop();
  /// A batch has been answered (or failed): send the next waiting one.
  void batch_done(renew_batch* b);

 private:
  void run();
  void send_waiting();

  client_core& core_;
  asio::steady_timer timer_;
  bool armed_ = false;
  bool stopped_ = false;
  op_pool<renew_batch> batches_;
  std::deque<renew_batch*> waiting_;  // built by the last run, not yet sent
  int in_flight_ = 0;
  static constexpr int max_in_flight = 4;
};

}  // namespace deadbolt::detail
