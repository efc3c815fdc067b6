// The subscriber connections a client shares among all its waiters. Channels are reference
// counted (SUBSCRIBE with the first waiter, UNSUBSCRIBE after the last); waiters sit in a table
// whose capacity is fixed at construction. A waiter is woken exactly once: by a message on its
// channel, by its timeout (the holder's TTL: pub/sub is only a hint), by a (re)subscription that
// could have hidden a message, or by cancellation. A channel whose last waiter left stays subscribed
// for a second or two (a waiter that re-checks and parks again must not pay for a new subscription,
// nor miss messages while it has none), then a sweep unsubscribes it.
//
// Classic pub/sub uses one connection (a single server, or a cluster's seeds: a classic message
// reaches every node). Sharded pub/sub on a cluster (SSUBSCRIBE) uses one connection ("link") per
// master that serves a subscribed channel; a channel_router (the cluster topology) says which. The
// tables are shared by all links, so their capacity is the client's, however many shards there are.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/observer.hpp"
#include "base/server_address.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pubsub/wake_policy.hpp"
#include "wire/connection.hpp"

#ifndef DEADBOLT_HAS_CLUSTER
#error "DEADBOLT_HAS_CLUSTER must be defined (src/CMakeLists.txt): it decides which members are built"
#endif

namespace deadbolt::detail {

enum class wake_reason { message, timeout, resubscribed, cancelled, shutdown };

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

/// Where a cluster's channels are subscribed (cluster_topology). It calls subscriber::replace()
/// whenever its answers may have changed: a new layout, the pub/sub mode decided.
class channel_router {
 public:
  enum class mode : std::uint8_t { unknown, classic, sharded };
  /// How channels are subscribed: unknown until the cluster's layout and pub/sub mode are known.
  virtual mode pubsub_mode() const = 0;
  /// The master that serves `channel`'s slot in the layout, or null: no layout yet, or no master
  /// for the slot. Whether a command connection to it is up does not matter.
  virtual const server_address* channel_master(std::string_view channel) const = 0;
  /// A shard dropped a subscription, or a link to a master was lost: read the layout again.
  virtual void layout_stale() = 0;
  /// A shard refused a subscription with `error_text`. True if it was a redirection (MOVED, ASK,
  /// TRYAGAIN, CLUSTERDOWN): the router learns from it and calls replace() when it knows more.
  virtual bool subscription_refused(std::string_view error_text, const server_address& from) = 0;

 protected:
  ~channel_router() = default;
};

class subscriber final : public std::enable_shared_from_this<subscriber> {
 public:
  subscriber(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  /// Classic pub/sub connects where `addresses` says (a cluster's seeds in turn), logging in with
  /// `ep`'s credentials. With a `router`, its mode decides: classic as above, or sharded on links to
  /// the masters it names (at most config::max_cluster_nodes of them).
  subscriber(asio::any_io_executor ex, const endpoint& ep, std::unique_ptr<address_source> addresses,
             const config& cfg, channel_router* router = nullptr);
  ~subscriber();

  /// The router's answers may have changed: every channel not where it should be is subscribed
  /// there (unsubscribed from where it was), and its waiters re-check once the new subscription holds.
  /// (Cluster builds only, like every sharded member: src/cluster/subscriber_shards.cpp.)
  void replace();

  /// Parks `w` on `channel` for at most `timeout`. Fails (without parking) with waiter_table_full or
  /// channel_table_full (a contender keeps its place between its waits: a newcomer is refused when
  /// the free places are all theirs); otherwise w.on_wake() is called exactly once, later, never from inside wait().
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

  /// The server moved (a Sentinel failover): every started connection reconnects at once (asking its
  /// address source again, even during a backoff) and resubscribes, and the waiters look again.
  void reconnect_links(std::error_code why);
  void stop();
  std::size_t waiting() const noexcept { return waiters_in_use_; }
  std::size_t channels() const noexcept { return channels_in_use_; }

 private:
  /// Whether this build has the sharded links (src/cluster/subscriber_shards.cpp). Without them the
  /// subscriber never refers to the sharded members, which are then declared but not defined.
  static constexpr bool with_shards = DEADBOLT_HAS_CLUSTER;
  static constexpr std::uint32_t none = 0xffffffffu;
  static constexpr std::uint16_t no_link = 0xffff;
  static constexpr std::uint16_t classic_link = 0;
  /// unplaced: wanted, but nobody knows yet where (a cluster without a layout or pub/sub mode).
  enum class channel_state : std::uint8_t { free, unplaced, subscribing, subscribed, unsubscribing };

  struct channel_entry {
    std::string name;
    channel_state state = channel_state::free;
    std::uint16_t link = no_link;  // where it is (being) subscribed
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
  struct link;

  std::uint32_t find_channel(std::string_view name) const;
  std::uint32_t claim_channel(std::string_view name, wake_policy policy);
  /// Subscribes `ch` where it belongs now, or leaves it unplaced.
  void place(std::uint32_t ch);
  /// The link that serves `channel` now (opened on first use), or no_link.
  std::uint16_t home_of(std::string_view channel);
  std::uint16_t sharded_home_of(std::string_view channel);
  std::uint16_t open_link(const server_address& where);
  void subscribe(std::uint32_t ch);
  void unsubscribe(std::uint32_t ch);
  void send(std::uint16_t link, bool subscribe, std::string_view channel);
  void free_channel(std::uint32_t ch);
  void wake(std::uint32_t slot, wake_reason why);
  void wake_channel(std::uint32_t channel, std::uint32_t how_many, wake_reason why);
  void release_channel(std::uint32_t channel);
  void arm_sweep();
  void sweep();
  /// Tells config::metrics how full a table is; a full one is logged too.
  void report_use(table_kind table) const;
  std::error_code table_full(table_kind table, std::error_code ec) const;

  void link_connected(std::uint16_t l);
  void link_lost(std::uint16_t l);
  void refused(std::uint16_t l, std::string_view error_text);
  void shard_refused(std::uint16_t l, std::string_view error_text);
  /// Logs a refused subscription once, with the server's words (waiters wake by their timers only).
  void log_refusal(std::string_view error_text) const;
  void on_push(std::uint16_t l, std::string_view kind, std::string_view channel, std::string_view payload);
  /// Closes sharded links that no channel uses any more.
  void close_idle_links();

  asio::any_io_executor executor_;
  endpoint ep_;  // copies: links are opened as long as the subscriber lives
  config cfg_;
  observer observe_;
  channel_router* router_;
  std::vector<std::unique_ptr<link>> links_;  // [classic_link] always; sharded ones after it, null when closed
  std::vector<channel_entry> channels_;
  std::vector<waiter_slot> slots_;
  std::vector<std::uint32_t> free_slots_;
  std::size_t waiters_in_use_ = 0;
  std::size_t contenders_ = 0;  // waiters between their first wait() and withdraw(), parked or not
  std::size_t channels_in_use_ = 0;
  asio::steady_timer sweep_timer_;
  bool sweep_armed_ = false;
  bool stopped_ = false;
  bool refusal_logged_ = false;
  std::vector<std::unique_ptr<command>> commands_;  // reusable SUBSCRIBE/UNSUBSCRIBE requests
  std::vector<command*> idle_commands_;
};

}  // namespace deadbolt::detail
