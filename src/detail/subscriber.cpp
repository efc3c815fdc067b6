#include "detail/subscriber.hpp"

#include <functional>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

// SUBSCRIBE / UNSUBSCRIBE for one channel; reused from a pool. On the subscriber connection a command
// is done once written: the server's confirmation arrives as a push.
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
                       const config& cfg)
    : executor_(ex),
      observe_(cfg),
      connection_(std::make_shared<connection>(ex, ep, std::move(addresses), cfg, connection::role::subscriber)),
      channels_(cfg.max_channels),
      sweep_timer_(ex) {
  slots_.reserve(cfg.max_waiters);
  free_slots_.reserve(cfg.max_waiters);
  for (std::size_t i = 0; i < cfg.max_waiters; ++i) {
    slots_.emplace_back(ex);
    free_slots_.push_back(static_cast<std::uint32_t>(cfg.max_waiters - 1 - i));
  }
  for (auto& c : channels_) c.name.reserve(64);
  for (auto& part : push_parts_) part.reserve(64);
  connection_->set_listener(this);
  connection_->set_push_handler(this);
}

subscriber::~subscriber() { stop(); }

void subscriber::stop() {
  if (stopped_) return;
  stopped_ = true;
  sweep_timer_.cancel();
  for (std::uint32_t i = 0; i < slots_.size(); ++i) {
    if (slots_[i].who != nullptr) wake(i, wake_reason::shutdown);
  }
  connection_->stop();
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
    c.state = channel_state::subscribing;
    ++channels_in_use_;
    report_use(table_kind::channels);
    return i;
  }
  return none;
}

void subscriber::send(std::string_view verb, std::string_view channel) {
  command* cmd;
  if (idle_commands_.empty()) {
    commands_.push_back(std::make_unique<command>(*this));
    cmd = commands_.back().get();
  } else {
    cmd = idle_commands_.back();
    idle_commands_.pop_back();
  }
  cmd->prepare(verb, channel);
  connection_->submit(*cmd);
}

std::error_code subscriber::wait(waiter& w, std::string_view channel, wake_policy policy,
                                 std::chrono::nanoseconds timeout, std::uint64_t seen) {
  if (stopped_) return errc::shutting_down;
  if (free_slots_.empty()) return table_full(table_kind::waiters, errc::waiter_table_full);
  std::uint32_t ch = find_channel(channel);
  if (ch == none) {
    ch = claim_channel(channel, policy);
    if (ch == none) return table_full(table_kind::channels, errc::channel_table_full);
    if (!started_) {
      started_ = true;
      connection_->start();
    }
    send("SUBSCRIBE", channel);
  } else if (channels_[ch].state == channel_state::unsubscribing) {
    // Still waiting for the UNSUBSCRIBE confirmation: subscribe again behind it.
    channels_[ch].state = channel_state::subscribing;
    send("SUBSCRIBE", channel);
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
    const bool live = c.state == channel_state::subscribing || c.state == channel_state::subscribed;
    if (!live || c.waiters > 0 || c.contenders > 0) continue;
    if (!c.idle_seen) {
      c.idle_seen = true;
      more = true;
      continue;
    }
    if (connection_->ready()) {
      c.state = channel_state::unsubscribing;
      send("UNSUBSCRIBE", c.name);
    } else {
      c.state = channel_state::free;  // the next connection simply does not subscribe it
      --channels_in_use_;
      report_use(table_kind::channels);
    }
  }
  if (more) arm_sweep();
}

void subscriber::on_connected() {
  for (auto& c : channels_) {
    if (c.state == channel_state::free) continue;
    if (c.waiters == 0 && c.contenders == 0) {
      c.state = channel_state::free;
      --channels_in_use_;
      report_use(table_kind::channels);
      continue;
    }
    c.state = channel_state::subscribing;
    send("SUBSCRIBE", c.name);
  }
}

void subscriber::on_disconnected(std::error_code) {
  // Waiters stay parked, bounded by their timers; on_connected() resubscribes and the confirmations
  // wake them to re-check what they may have missed.
}

void subscriber::on_push_node(const resp::node& n, bool end_of_reply) {
  if (n.depth == 0) push_index_ = 0;
  if (n.depth == 1 && push_index_ < 3) push_parts_[push_index_++].assign(n.value);
  if (!end_of_reply) return;
  if (push_index_ == 3) on_push(push_parts_[0], push_parts_[1], push_parts_[2]);
  push_index_ = 0;
}

void subscriber::on_push(std::string_view kind, std::string_view channel, std::string_view payload) {
  const std::uint32_t ch = find_channel(channel);
  if (ch == none) return;
  channel_entry& c = channels_[ch];
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
    if (c.state == channel_state::unsubscribing && c.waiters == 0 && c.contenders == 0) {
      c.state = channel_state::free;
      --channels_in_use_;
      report_use(table_kind::channels);
    }
  }
}

void subscriber::report_use(table_kind table) const {
  if (metrics_hook* m = observe_.metrics()) {
    const bool waiters = table == table_kind::waiters;
    m->on_table_use(table, waiters ? waiters_in_use_ : channels_in_use_, waiters ? slots_.size() : channels_.size());
  }
}

std::error_code subscriber::table_full(table_kind table, std::error_code ec) const {
  if (metrics_hook* m = observe_.metrics()) m->on_table_full(table);
  observe_.log(log_level::warning, ec, table == table_kind::waiters ? " (config::max_waiters)" : " (config::max_channels)");
  return ec;
}

}  // namespace deadbolt::detail
