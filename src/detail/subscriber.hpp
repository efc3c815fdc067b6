// The one subscriber connection a client shares among all its waiters. Channels are reference
// counted (SUBSCRIBE with the first waiter, UNSUBSCRIBE after the last); waiters sit in a table
// whose capacity is fixed at construction. A waiter is woken exactly once: by a message on its
// channel, by its timeout (the holder's TTL: pub/sub is only a hint), by a (re)subscription that
// could have hidden a message, or by cancellation. A channel whose last waiter left stays subscribed
// for a second or two (a waiter that re-checks and parks again must not pay for a new subscription,
// nor miss messages while it has none), then a sweep unsubscribes it.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio.hpp"
#include "detail/connection.hpp"
#include "detail/observer.hpp"

namespace deadbolt::detail {

enum class wake_reason { message, timeout, resubscribed, cancelled, shutdown };

/// How many local waiters one message wakes (Redisson's per-kind policy, docs/protocol.md §12).
enum class wake_policy : std::uint8_t {
  one,          ///< lock channels: one waiter per unlock message
  all,          ///< every waiter on the channel
  by_payload,   ///< payload "1" wakes all (write unlock), anything else one
  count,        ///< payload is a count: wake that many (semaphores)
};

class waiter {
 public:
  virtual void on_wake(wake_reason why) = 0;

  // Set by the subscriber: this waiter counts as a contender for `contended_channel` from its first
  // wait() until withdraw(), parked or not (it may be re-checking after a wake-up).
  bool contending = false;
  std::uint32_t contended_channel = 0;

 protected:
  ~waiter() = default;
};

class subscriber final : public std::enable_shared_from_this<subscriber>,
                         private connection_listener,
                         private push_handler {
 public:
  subscriber(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  /// Connects where `addresses` says (a cluster's nodes in turn), logging in with `ep`'s credentials.
  subscriber(asio::any_io_executor ex, const endpoint& ep, std::unique_ptr<address_source> addresses,
             const config& cfg);
  ~subscriber();

  /// Parks `w` on `channel` for at most `timeout`. Fails (without parking) with waiter_table_full or
  /// channel_table_full; otherwise w.on_wake() is called exactly once, later, never from inside wait().
  /// `seen` is what messages_on(channel) said before the attempt that found the lock busy: if a message
  /// came since (the unlock raced the attempt's reply), the waiter is woken at once instead of missing it.
  std::error_code wait(waiter& w, std::string_view channel, wake_policy policy,
                       std::chrono::nanoseconds timeout, std::uint64_t seen);
  /// How many messages `channel` has received (0 if it is not subscribed).
  std::uint64_t messages_on(std::string_view channel) const;
  /// Wakes `w` with wake_reason::cancelled if it is parked; returns false if it was not.
  bool cancel(waiter& w);
  /// `w` stops contending (its operation ended). Call it after the last wake-up, never while parked.
  void withdraw(waiter& w);
  /// True while some operation of this client contends on `channel` (parked, or re-checking after a
  /// wake-up): a new one should queue behind them instead of barging in.
  bool has_contenders(std::string_view channel) const;

  void stop();
  std::size_t waiting() const noexcept { return waiters_in_use_; }
  std::size_t channels() const noexcept { return channels_in_use_; }

 private:
  static constexpr std::uint32_t none = 0xffffffffu;
  enum class channel_state : std::uint8_t { free, subscribing, subscribed, unsubscribing };

  struct channel_entry {
    std::string name;
    channel_state state = channel_state::free;
    wake_policy policy = wake_policy::one;
    std::uint32_t waiters = 0;      // parked on it
    std::uint32_t contenders = 0;   // waiters whose operation has not ended (parked or re-checking)
    std::uint64_t messages = 0;     // received so far: lets a waiter see one it missed while not parked
    std::uint32_t first = none, last = none;  // FIFO of waiter slots
    bool idle_seen = false;  // had no waiters at the last sweep
  };
  struct waiter_slot {
    explicit waiter_slot(asio::any_io_executor ex) : timer(ex) {}
    waiter* who = nullptr;
    std::uint32_t channel = none;
    std::uint32_t prev = none, next = none;
    std::uint64_t generation = 0;
    wake_reason on_timer = wake_reason::timeout;  // message when the timer delivers a missed message
    asio::steady_timer timer;
  };
  class command;

  std::uint32_t find_channel(std::string_view name) const;
  std::uint32_t claim_channel(std::string_view name, wake_policy policy);
  void send(std::string_view verb, std::string_view channel);
  void wake(std::uint32_t slot, wake_reason why);
  void wake_channel(std::uint32_t channel, std::uint32_t how_many, wake_reason why);
  void release_channel(std::uint32_t channel);
  void arm_sweep();
  void sweep();
  /// Tells config::metrics how full a table is; a full one is logged too.
  void report_use(table_kind table) const;
  std::error_code table_full(table_kind table, std::error_code ec) const;

  void on_connected() override;
  void on_disconnected(std::error_code why) override;
  void on_push_node(const resp::node& n, bool end_of_reply) override;
  void on_push(std::string_view kind, std::string_view channel, std::string_view payload);

  asio::any_io_executor executor_;
  observer observe_;
  std::shared_ptr<connection> connection_;
  std::vector<channel_entry> channels_;
  std::vector<waiter_slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t waiters_in_use_ = 0;
  std::size_t channels_in_use_ = 0;
  asio::steady_timer sweep_timer_;
  bool sweep_armed_ = false;
  bool started_ = false;
  bool stopped_ = false;
  // The push being assembled: kind, channel, payload (copied: nodes are gone after on_push_node).
  std::string push_parts_[3];
  std::size_t push_index_ = 0;
  std::vector<std::unique_ptr<command>> commands_;  // reusable SUBSCRIBE/UNSUBSCRIBE requests
  std::vector<command*> idle_commands_;
};

}  // namespace deadbolt::detail
