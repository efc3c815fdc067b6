// The one operation behind every wait: a lock's acquire (src/lock/lock_attempt.cpp) and the
// semaphores' and the latch's calls (src/semaphore/sync_attempt.cpp). It carries out what the wait driver
// (src/wait/wait_driver.hpp) decides: sends the step it names, parks on the channel, sleeps on its
// timer, finishes. What a step sends and what its reply means is the attempt's (the kind's side);
// the op itself knows no kind. Ops are pooled per attempt type (wait_op<Attempt>): after warm-up a
// wait allocates nothing.
#pragma once

#include <cstdint>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/node.hpp"
#include "engine/op_context.hpp"
#include "memory/op_pool.hpp"
#include "pipeline/request.hpp"
#include "pubsub/subscriber.hpp"
#include "wait/wait_driver.hpp"

namespace deadbolt::detail {

class wait_op_base;

/// A kind's side of one wait, in flight inside a wait_op.
class wait_attempt {
 public:
  /// Before `s` is sent: take clock readings, reset the reply.
  virtual void sending(const wait_step& s) = 0;
  virtual void encode(const wait_step& s, resp::encoder& e, request& r) = 0;
  virtual void on_node(const wait_step& s, const resp::node& n) = 0;
  /// After the reply's last node: what it meant (error replies included: failed).
  virtual wait_outcome read(const wait_step& s) = 0;
  /// The wait ended with `ec` (end.aborted already turned into operation_aborted): keep or give
  /// back what it took, note an unknown outcome, then op.recycle(), then complete the caller.
  virtual void conclude(const wait_action& end, std::error_code ec, wait_op_base& op) = 0;

 protected:
  ~wait_attempt() = default;
};

/// How a wait starts (from the kind).
struct wait_setup {
  wait_rules rules;
  std::int64_t wait_ms = 0;           ///< < 0: no deadline; 0: a single attempt
  const wait_step* prepare = nullptr;  ///< sent before the first attempt
  bool queue_first = false;            ///< park behind this client's other waiters before trying
  std::string_view channel;            ///< where it parks (must outlive the wait)
  wake_policy wake = wake_policy::one;
};

class wait_op_base : public request, public waiter, public operation {
 public:
  void cancel() override;
  /// Starts the wait (the attempt calls it once it is set up).
  void begin(wait_attempt& a, const wait_setup& s);
  /// Back to its pool: the attempt calls it in conclude(), before completing the caller.
  virtual void recycle() = 0;

  op_context& core;

 protected:
  explicit wait_op_base(op_context& c) : core(c), timer_(c.io_executor()) {}
  ~wait_op_base() = default;

 private:
  void run(const wait_action& a);
  void send(const wait_step& s, bool sync);
  void park(const wait_action& a);
  void sleep(std::int64_t wait_ns);
  void finish(const wait_action& a);
  wait_moment moment() const;

  void encode(resp::encoder& e) override { attempt_->encode(driver_.current(), e, *this); }
  void on_node(const resp::node& n) override { attempt_->on_node(driver_.current(), n); }
  void on_done(std::error_code ec) override;
  void on_wake(wake_reason why) override;

  wait_driver driver_;
  wait_attempt* attempt_ = nullptr;
  bool parks_ = true;
  bool acquiring_ = false;  // the kind's attempt takes something (its rules sync replicas)
  std::string_view channel_;
  wake_policy wake_ = wake_policy::one;
  asio::steady_timer timer_;  // a sleep: the spin lock's backoff, the pause after LOADING / BUSY
};

/// The pooled op of one attempt type: core.pools().of<wait_op<Attempt>>().
template <typename Attempt>
class wait_op final : public wait_op_base {
 public:
  explicit wait_op(op_context& c) : wait_op_base(c), attempt(*this) {}
  void recycle() override { core.pools().template of<wait_op>().give_back(this); }
  /// Starts a wait: the attempt sets itself up, then calls begin().
  template <typename... Args>
  op_ref start(Args&&... args) {
    const op_ref ref = this->ref();
    attempt.start(static_cast<Args&&>(args)...);
    return ref;
  }

  Attempt attempt;
};

}  // namespace deadbolt::detail
