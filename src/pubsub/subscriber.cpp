#include "pubsub/subscriber.hpp"

#include <algorithm>
#include <utility>

#include "base/server_error.hpp"
#include "deadbolt/error.hpp"

namespace deadbolt::detail {

// (S)SUBSCRIBE / (S)UNSUBSCRIBE for one channel; reused from a pool. On a subscriber connection a
// command is done once written: the server's confirmation arrives as a push.
class subscriber::command final : public request {
 public:
  explicit command(subscriber& owner) : owner_(owner) {}
  void prepare(std::string_view verb, std::string_view channel) {
    verb_ = verb;
    channel_.assign(channel);
  }
  void encode(resp::encoder& e) override { e.command(verb_, channel_); }
  void on_node(const resp::node&) override {}
  void on_done(std::error_code) override { owner_.idle_commands_.push_back(this); }

 private:
  subscriber& owner_;
  std::string_view verb_;
  std::string channel_;
};

subscriber::subscriber(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : subscriber(ex, ep, std::make_unique<static_addresses>(std::vector<server_address>{address_of(ep)}), cfg) {}

subscriber::subscriber(asio::any_io_executor ex, const endpoint& ep, std::unique_ptr<address_source> addresses,
                       const config& cfg, link_placement* placement)
    : executor_(ex),
      ep_(ep),
      cfg_(cfg),
      observe_(cfg),
      placement_(placement),
      channels_(cfg.max_channels),
      sweep_timer_(ex) {
  slots_.reserve(cfg.max_waiters);
  free_slots_.reserve(cfg.max_waiters);
  for (std::size_t i = 0; i < cfg.max_waiters; ++i) {
    slots_.emplace_back(ex);
    free_slots_.push_back(static_cast<std::uint32_t>(cfg.max_waiters - 1 - i));
  }
  for (auto& c : channels_) c.name.reserve(64);
  links_.reserve(placement_ != nullptr ? 1 + cfg.max_cluster_nodes : 1);
  auto classic = std::make_shared<connection>(ex, ep, std::move(addresses), cfg, connection::role::subscriber);
  links_.push_back(std::make_unique<link>(*this, classic_link, std::move(classic), "SUBSCRIBE", "UNSUBSCRIBE"));
}

subscriber::~subscriber() { stop(); }

void subscriber::stop() {
  if (stopped_) return;
  stopped_ = true;
  placement_ = nullptr;  // its owner is closing
  sweep_timer_.cancel();
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].who != nullptr) wake(i, wake_reason::shutdown);
  }
  for (auto& l : links_) {
    if (l) l->conn->stop();
  }
}

void subscriber::reconnect_links(std::error_code why) {
  if (stopped_) return;
  for (auto& l : links_) {
    if (l && l->started) l->conn->reconnect_now(why);
  }
}

std::uint32_t subscriber::find_channel(std::string_view name) const {
  for (std::uint32_t i = 0; i < channels_.size(); ++i) {
    if (channels_[i].state != channel_state::free && channels_[i].name == name) return i;
  }
  return none;
}

std::uint32_t subscriber::claim_channel(std::string_view name, wake_policy policy) {
  for (std::uint32_t i = 0; i < channels_.size(); ++i) {
    channel_entry& c = channels_[i];
    if (c.state != channel_state::free) continue;
    c.name.assign(name);
    c.policy = policy;
    c.waiters = 0;
    c.contenders = 0;
    c.messages = 0;
    c.first = c.last = none;
    c.state = channel_state::unplaced;
    c.link = no_link;
    ++channels_in_use_;
    report_use(table_kind::channels);
    return i;
  }
  return none;
}

void subscriber::place(std::uint32_t ch) {
  channel_entry& c = channels_[ch];
  c.link = placement_ != nullptr ? placement_->home_of(*this, c.name) : classic_link;  // as home_of()
  if (c.link == no_link) {
    c.state = channel_state::unplaced;  // replace() subscribes it once the placement knows where
    return;
  }
  subscribe(ch);
}

void subscriber::subscribe(std::uint32_t ch) {
  channel_entry& c = channels_[ch];
  c.state = channel_state::subscribing;
  send(c.link, true, c.name);
}

void subscriber::unsubscribe(std::uint32_t ch) {
  channel_entry& c = channels_[ch];
  c.state = channel_state::unsubscribing;
  send(c.link, false, c.name);
}

void subscriber::send(link_id l, bool subscribe, std::string_view channel) {
  link& to = *links_[l];
  if (!to.started) {
    to.started = true;
    to.conn->start();
  }
  command* cmd;
  if (idle_commands_.empty()) {
    commands_.push_back(std::make_unique<command>(*this));
    cmd = commands_.back().get();
  } else {
    cmd = idle_commands_.back();
    idle_commands_.pop_back();
  }
  cmd->prepare(subscribe ? to.subscribe_verb : to.unsubscribe_verb, channel);
  to.conn->submit(*cmd);
}

void subscriber::free_channel(std::uint32_t ch) {
  channels_[ch].state = channel_state::free;
  channels_[ch].link = no_link;
  --channels_in_use_;
  report_use(table_kind::channels);
}

std::error_code subscriber::wait(waiter& w, std::string_view channel, wake_policy policy,
                                 std::chrono::nanoseconds timeout, std::uint64_t seen) {
  if (stopped_) return errc::shutting_down;
  // A contender re-checking after a wake-up keeps its place in the table: a newcomer is admitted only
  // to a place none of them will come back for (else the contender's next wait() would find the table
  // full, and its operation fail, though it was admitted first).
  const std::size_t away = contenders_ - waiters_in_use_;  // contenders not parked right now
  if (w.contending ? free_slots_.empty() : free_slots_.size() <= away) {
    return table_full(table_kind::waiters, errc::waiter_table_full);
  }
  std::uint32_t ch = find_channel(channel);
  if (ch == none) {
    ch = claim_channel(channel, policy);
    if (ch == none) return table_full(table_kind::channels, errc::channel_table_full);
    place(ch);
  } else if (channels_[ch].state == channel_state::unsubscribing) {
    // Still waiting for the UNSUBSCRIBE confirmation: subscribe again behind it.
    subscribe(ch);
  }

  const std::uint32_t index = free_slots_.back();
  free_slots_.pop_back();
  ++waiters_in_use_;
  report_use(table_kind::waiters);
  waiter_slot& slot = slots_[index];
  channel_entry& c = channels_[ch];
  if (!w.contending) {
    w.contending = true;
    w.contended_channel = ch;
    ++c.contenders;
    ++contenders_;
  }
  // A message that came after the caller's attempt was sent, while it was not parked, is delivered
  // now, through the timer (never from inside wait()).
  slot.on_timer = wake_reason::timeout;
  if (c.messages != seen) {
    slot.on_timer = wake_reason::message;
    timeout = std::chrono::nanoseconds(0);
  }
  slot.who = &w;
  slot.channel = ch;
  slot.prev = c.last;
  slot.next = none;
  if (c.last != none) slots_[c.last].next = index; else c.first = index;
  c.last = index;
  ++c.waiters;

  const std::uint64_t gen = ++slot.generation;
  slot.timer.expires_after(timeout);
  slot.timer.async_wait([self = shared_from_this(), index, gen](std::error_code ec) {
    if (ec || self->slots_[index].generation != gen || self->slots_[index].who == nullptr) return;
    self->wake(index, self->slots_[index].on_timer);
  });
  return {};
}

bool subscriber::cancel(waiter& w) {
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].who == &w) {
      wake(i, wake_reason::cancelled);
      return true;
    }
  }
  return false;
}

void subscriber::withdraw(waiter& w) {
  if (!w.contending) return;
  w.contending = false;
  --contenders_;
  channel_entry& c = channels_[w.contended_channel];
  if (c.contenders > 0) --c.contenders;
  if (c.contenders == 0 && c.waiters == 0) release_channel(w.contended_channel);
}

std::uint64_t subscriber::messages_on(std::string_view channel) const {
  const std::uint32_t ch = find_channel(channel);
  return ch == none ? 0 : channels_[ch].messages;
}

bool subscriber::has_contenders(std::string_view channel) const {
  const std::uint32_t ch = find_channel(channel);
  return ch != none && channels_[ch].contenders > 0;
}

void subscriber::wake(std::uint32_t index, wake_reason why) {
  waiter_slot& slot = slots_[index];
  waiter* who = slot.who;
  channel_entry& c = channels_[slot.channel];
  if (slot.prev != none) slots_[slot.prev].next = slot.next; else c.first = slot.next;
  if (slot.next != none) slots_[slot.next].prev = slot.prev; else c.last = slot.prev;
  --c.waiters;
  const std::uint32_t ch = slot.channel;
  slot.who = nullptr;
  slot.channel = none;
  ++slot.generation;
  slot.timer.cancel();
  free_slots_.push_back(index);
  --waiters_in_use_;
  report_use(table_kind::waiters);
  if (c.waiters == 0 && c.contenders == 0) release_channel(ch);
  if (why == wake_reason::shutdown || why == wake_reason::cancelled) withdraw(*who);
  who->on_wake(why);
}

void subscriber::wake_channel(std::uint32_t ch, std::uint32_t how_many, wake_reason why) {
  // Only the waiters parked now: a woken waiter that parks again goes to the back of the FIFO.
  channel_entry& c = channels_[ch];
  std::uint32_t n = std::min(how_many, c.waiters);
  while (n-- > 0 && c.first != none) wake(c.first, why);
}

void subscriber::release_channel(std::uint32_t ch) {
  channel_entry& c = channels_[ch];
  if (stopped_ || c.waiters > 0 || c.contenders > 0) return;
  c.idle_seen = false;
  arm_sweep();
}

void subscriber::arm_sweep() {
  if (sweep_armed_ || stopped_) return;
  sweep_armed_ = true;
  sweep_timer_.expires_after(std::chrono::seconds(1));
  sweep_timer_.async_wait([self = shared_from_this()](std::error_code ec) {
    if (ec) return;
    self->sweep_armed_ = false;
    self->sweep();
  });
}

void subscriber::sweep() {
  bool more = false;
  for (auto& c : channels_) {
    const bool live = c.state == channel_state::unplaced || c.state == channel_state::subscribing ||
                      c.state == channel_state::subscribed;
    if (!live || c.waiters > 0 || c.contenders > 0) continue;
    if (!c.idle_seen) {
      c.idle_seen = true;
      more = true;
      continue;
    }
    if (c.link != no_link && links_[c.link]->conn->ready()) {
      unsubscribe(static_cast<std::uint32_t>(&c - channels_.data()));
    } else {
      free_channel(static_cast<std::uint32_t>(&c - channels_.data()));  // the next connection does not subscribe it
    }
  }
  if (placement_ != nullptr) placement_->close_idle_links(*this);
  if (more) arm_sweep();
}

void subscriber::link_connected(link_id l) {
  for (std::uint32_t ch = 0; ch < channels_.size(); ++ch) {
    channel_entry& c = channels_[ch];
    if (c.state == channel_state::free || c.link != l) continue;
    if (c.waiters == 0 && c.contenders == 0) {
      free_channel(ch);
      continue;
    }
    subscribe(ch);
  }
}

void subscriber::refused(std::string_view error_text) {
  // Nothing to learn (NOPERM: an ACL user without the channel's grant, ...); waiters fall back to
  // their timers. The log says why, in the server's words.
  if (!refusal_logged_) {
    refusal_logged_ = true;
    log_refusal(error_text);
  }
}

void subscriber::log_refusal(std::string_view error_text) const {
  observe_.log(log_level::warning, "subscription refused: ", server_error_code(error_text), ": ", error_text);
}

void subscriber::on_push(link_id l, std::string_view kind, std::string_view channel, std::string_view payload) {
  const std::uint32_t ch = find_channel(channel);
  if (ch == none) return;
  channel_entry& c = channels_[ch];
  if (c.link != l) return;  // from a link the channel has left
  if (kind == "message") {
    ++c.messages;
    std::uint32_t n = 1;
    switch (c.policy) {
      case wake_policy::one: break;
      case wake_policy::all: n = c.waiters; break;
      case wake_policy::by_payload: n = payload == "1" ? c.waiters : 1; break;
      case wake_policy::count: {
        unsigned long v = 0;
        for (char d : payload) {
          if (d < '0' || d > '9') break;
          v = v * 10 + static_cast<unsigned long>(d - '0');
          if (v > c.waiters) break;
        }
        n = static_cast<std::uint32_t>(std::min<unsigned long>(v, c.waiters));
        break;
      }
    }
    wake_channel(ch, n, wake_reason::message);
  } else if (kind == "subscribe") {
    if (c.state != channel_state::subscribing) return;
    c.state = channel_state::subscribed;
    // A message published before the subscription took effect was missed: everyone re-checks.
    wake_channel(ch, c.waiters, wake_reason::resubscribed);
  } else if (kind == "unsubscribe") {
    if (c.state == channel_state::unsubscribing && c.waiters == 0 && c.contenders == 0) free_channel(ch);
  }
}

void subscriber::report_use(table_kind table) const {
  if (const metrics_calls* m = observe_.metrics()) {
    const bool waiters = table == table_kind::waiters;
    m->on_table_use(table, waiters ? waiters_in_use_ : channels_in_use_, waiters ? slots_.size() : channels_.size());
  }
}

std::error_code subscriber::table_full(table_kind table, std::error_code ec) const {
  if (const metrics_calls* m = observe_.metrics()) m->on_table_full(table);
  observe_.log(log_level::warning, ec, table == table_kind::waiters ? " (config::max_waiters)" : " (config::max_channels)");
  return ec;
}

}  // namespace deadbolt::detail
