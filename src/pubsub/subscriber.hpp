// The subscriber connections a client shares among all its waiters. Channels are reference
// counted (SUBSCRIBE with the first waiter, UNSUBSCRIBE after the last); waiters sit in a table
// whose capacity is fixed at construction. A waiter is woken exactly once: by a message on its
// channel, by its timeout (the holder's TTL: pub/sub is only a hint), by a (re)subscription that
// could have hidden a message, or by cancellation. A channel whose last waiter left stays subscribed
// for a second or two (a waiter that re-checks and parks again must not pay for a new subscription,
// nor miss messages while it has none), then a sweep unsubscribes it.
//
// Every channel is subscribed on the one classic link (a single server, or a cluster's seeds: a
// classic message reaches every node), unless a link_placement (pubsub/link_placement.hpp) says
// otherwise: sharded pub/sub (SSUBSCRIBE) on a cluster uses one link per master that serves a
// subscribed channel, which the placement opens and closes through the link API below. The tables
// are shared by all links, so their capacity is the client's, however many links there are.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "base/observer.hpp"
#include "base/server_address.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pubsub/link_placement.hpp"
#include "pubsub/wake_policy.hpp"
#include "wire/connection.hpp"

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

class subscriber final : public std::enable_shared_from_this<subscriber> {
 public:
  subscriber(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  /// The classic link connects where `addresses` says (a cluster's seeds in turn), logging in with
  /// `ep`'s credentials. With a `placement`, it says where each channel goes: the classic link, or links
  /// it opens (at most config::max_cluster_nodes of them). The placement must outlive the subscriber's
  /// stop() (its owner calls stop() before it goes).
  subscriber(asio::any_io_executor ex, const endpoint& ep, std::unique_ptr<address_source> addresses,
             const config& cfg, link_placement* placement = nullptr);
  ~subscriber();

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

  // The link API, for a link_placement and its owner (a subscriber without a placement never uses it).
  // Defined in subscriber_placement.cpp, with the shard links.

  /// The placement's answers may have changed: every channel not where it should be is subscribed
  /// there (unsubscribed from where it was), and its waiters re-check once the new subscription holds.
  void replace();
  /// A link for sharded pub/sub (SSUBSCRIBE) to `where`, connected when a channel is first subscribed
  /// on it; no_link if the link table is full. Each call opens a new link: the placement remembers
  /// which link goes where.
  link_id open_shard_link(const server_address& where);
  /// How many channels are on `link`: being subscribed, subscribed or being unsubscribed there, or
  /// refused there and waiting for a new place.
  std::size_t channels_on(link_id link) const;
  /// Closes `link`, one that open_shard_link() opened, if no channel is on it (its id may be given out
  /// again); false, and nothing done, if a channel is, or it is no such link.
  bool close_link(link_id link);

 private:
  static constexpr std::uint32_t none = 0xffffffffu;
  /// unplaced: wanted, but nobody knows yet where (a cluster without a layout or pub/sub mode).
  enum class channel_state : std::uint8_t { free, unplaced, subscribing, subscribed, unsubscribing };

  struct channel_entry {
    std::string name;
    channel_state state = channel_state::free;
    link_id link = no_link;  // where it is (being) subscribed
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
  // One subscriber connection; this one is the classic link (SUBSCRIBE). A lost connection changes
  // nothing here: waiters stay parked, bounded by their timers, and link_connected() resubscribes once
  // it is back (the confirmations wake them to re-check what they may have missed). Defined here so
  // that the shard links (subscriber_placement.cpp) derive from it in a unit of their own, which a
  // program whose subscribers have no placement does not link.
  struct link : connection_listener, push_handler {
    link(subscriber& owner, link_id index, std::shared_ptr<connection> c, std::string_view subscribe_verb,
         std::string_view unsubscribe_verb)
        : owner(owner),
          index(index),
          subscribe_verb(subscribe_verb),
          unsubscribe_verb(unsubscribe_verb),
          conn(std::move(c)) {
      for (auto& part : parts) part.reserve(64);
      conn->set_listener(this);
      conn->set_push_handler(this);
    }
    virtual ~link() {
      conn->set_listener(nullptr);
      conn->set_push_handler(nullptr);
      conn->stop();
    }

    void on_connected() override { owner.link_connected(index); }
    void on_disconnected(std::error_code) override {}
    void on_push_node(const resp::node& n, bool end_of_reply) override {
      switch (assemble(n, end_of_reply)) {
        case arrival::partial: break;
        case arrival::refused: owner.refused(n.value); break;
        case arrival::complete: owner.on_push(index, parts[0], parts[1], parts[2]); break;
      }
    }

    enum class arrival { partial, refused, complete };
    /// Adds `n` to the push being assembled in `parts`. An error reply is the server refusing a
    /// subscription (its words are `n.value`).
    arrival assemble(const resp::node& n, bool end_of_reply) {
      if (n.depth == 0) part = 0;
      if (n.depth == 0 && (n.type == resp::type::simple_error || n.type == resp::type::blob_error)) {
        return arrival::refused;
      }
      if (n.depth == 1 && part < 3) parts[part++].assign(n.value);
      if (!end_of_reply) return arrival::partial;
      const bool whole = part == 3;
      part = 0;
      return whole ? arrival::complete : arrival::partial;
    }

    subscriber& owner;
    link_id index;
    std::string_view subscribe_verb, unsubscribe_verb;
    std::shared_ptr<connection> conn;
    bool started = false;
    // The push being assembled: kind, channel, payload (copied: nodes are gone after on_push_node).
    std::string parts[3];
    std::size_t part = 0;
  };
  struct shard_link;

  std::uint32_t find_channel(std::string_view name) const;
  std::uint32_t claim_channel(std::string_view name, wake_policy policy);
  /// Subscribes `ch` where it belongs now, or leaves it unplaced.
  void place(std::uint32_t ch);
  /// The link that serves `channel` now (opened on first use), or no_link.
  link_id home_of(std::string_view channel);
  void subscribe(std::uint32_t ch);
  void unsubscribe(std::uint32_t ch);
  void send(link_id link, bool subscribe, std::string_view channel);
  void free_channel(std::uint32_t ch);
  void wake(std::uint32_t slot, wake_reason why);
  void wake_channel(std::uint32_t channel, std::uint32_t how_many, wake_reason why);
  void release_channel(std::uint32_t channel);
  void arm_sweep();
  void sweep();
  /// Tells config::metrics how full a table is; a full one is logged too.
  void report_use(table_kind table) const;
  std::error_code table_full(table_kind table, std::error_code ec) const;

  // What a link heard. A shard link's news (shard_*, subscriber_placement.cpp) goes to the placement too.
  void link_connected(link_id l);
  void on_push(link_id l, std::string_view kind, std::string_view channel, std::string_view payload);
  /// A subscription refused: logged once (waiters wake by their timers only).
  void refused(std::string_view error_text);
  void log_refusal(std::string_view error_text) const;
  void shard_lost(link_id l);
  void shard_refused(link_id l, std::string_view error_text);
  void shard_push(link_id l, std::string_view kind, std::string_view channel, std::string_view payload);

  asio::any_io_executor executor_;
  endpoint ep_;  // copies: links are opened as long as the subscriber lives
  config cfg_;
  observer observe_;
  link_placement* placement_;  // null: every channel on the classic link
  std::vector<std::unique_ptr<link>> links_;  // [classic_link] always; the placement's after it, null when closed
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
