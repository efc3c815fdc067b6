#include "engine/watchdog.hpp"
#include "engine/renewal_script.hpp"

#include <algorithm>
#include <chrono>
#include <limits>
#include <string_view>

#include "base/deadline.hpp"
#include "base/server_error.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "engine/op_context.hpp"
#include "pipeline/script_call.hpp"

namespace deadbolt::detail {

// One script call renewing up to max_keys holds of one route and one renewal kind, answered with
// one flag per hold.
class renew_batch final : public request {
 public:
  static constexpr std::size_t max_keys = 100;  // Redisson's lockWatchdogBatchSize

  explicit renew_batch(watchdog& dog) : dog_(dog) {}
  void clear(std::uint32_t route, std::uint32_t node, hold_field kind) {
    size_ = 0;
    route_ = route;
    node_ = node;
    kind_ = kind;
  }
  /// The node whose window the batch waits in and is counted against (src/engine/renewal_windows.hpp).
  std::uint32_t node() const { return node_; }
  bool takes(std::uint32_t route, hold_field kind) const { return route_ == route && kind_ == kind; }
  bool full() const { return size_ == renewal_batch_limit(kind_, max_keys); }
  void add(std::uint32_t hold_index) {
    hold& h = dog_.ctx_.held_locks()[hold_index];
    index_[size_] = hold_index;
    generation_[size_] = h.generation;
    h.renewal_queued = true;
    ++size_;
  }
  /// Leaves the queue: its holds may be put in a batch again.
  void unqueue() {
    for (std::size_t i = 0; i < size_; ++i) {
      hold& h = dog_.ctx_.held_locks()[index_[i]];
      if (h.generation == generation_[i]) h.renewal_queued = false;  // else released meanwhile
    }
  }
  /// Sends the batch, minus holds released or changed since it was built; false if none is left.
  bool send() {
    unqueue();
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const hold& h = dog_.ctx_.held_locks()[index_[i]];
      if (!h.in_use || h.generation != generation_[i] || !h.watchdog || h.lost) continue;
      index_[kept] = index_[i];
      generation_[kept] = generation_[i];
      ++kept;
    }
    size_ = kept;
    if (size_ == 0) return false;
    sent_ns_ = port::monotonic_ns();
    replies_ = 0;
    refusal_ = {};
    reason_size_ = 0;
    lease_.set(dog_.ctx_.settings().watchdog_ms);
    syncs_replicas = dog_.ctx_.settings().syncs_replicas;
    route_key = dog_.ctx_.held_locks()[index_[0]].name;  // every key of a batch is on one route
    dog_.ctx_.submit(*this);
    return true;
  }

  void encode(resp::encoder& e) override {
    const hold* holds[max_keys];
    for (std::size_t i = 0; i < size_; ++i) holds[i] = &dog_.ctx_.held_locks()[index_[i]];
    encode_renewal(e, *this, kind_, holds, size_, lease_.view(), dog_.ctx_.settings().client_id);
  }
  void on_node(const resp::node& n) override {
    if (n.depth == 0 && resp::is_error(n.type)) {  // refused: nothing ran
      refusal_ = server_error_code(n.value);
      reason_size_ = std::min(n.value.size(), sizeof reason_);
      std::copy_n(n.value.data(), reason_size_, reason_);
      return;
    }
    if (n.depth == 1 && n.type == resp::type::integer && replies_ < size_) flags_[replies_++] = n.value == "1";
  }
  void on_done(std::error_code ec) override {
    // A batch that failed or was refused changes nothing: the next run retries, and a lease not
    // confirmed for its whole length is declared lost by the run itself.
    if (!ec && refusal_) ec = refusal_;
    if (!ec && replies_ != size_) ec = errc::protocol_error;  // not one flag per hold
    std::size_t renewed = 0;
    if (!ec) {
      const std::int64_t now = port::monotonic_ns();
      for (std::size_t i = 0; i < replies_; ++i) {
        hold& h = dog_.ctx_.held_locks()[index_[i]];
        if (!h.in_use || h.generation != generation_[i] || h.lost) continue;  // unlocked meanwhile
        if (flags_[i] && now >= valid_until(h, dog_.ctx_.settings().margin)) {
          dog_.host_.lease_lost(index_[i]);  // confirmed after the client's deadline: it was lost then
        } else if (flags_[i]) {
          h.confirmed_ns = std::max(h.confirmed_ns, sent_ns_);
          ++renewed;
        } else {
          dog_.host_.lease_lost(index_[i]);
        }
      }
    }
    if (const metrics_calls* m = dog_.ctx_.observe.metrics()) ec ? m->on_renewal_failure(size_, ec) : m->on_renewal(renewed);
    if (refusal_) {
      dog_.ctx_.observe.log(log_level::warning, "renewal of ", size_, " lease(s) refused by the server: ",
                        std::string_view(reason_, reason_size_));
    } else if (ec) {
      dog_.ctx_.observe.log(log_level::warning, "renewal of ", size_, " lease(s) failed: ", ec);
    } else {
      dog_.ctx_.observe.log(log_level::debug, "renewed ", renewed, " of ", size_, " lease(s)");
    }
    // As Redisson: the renewal stands on the master and the next run renews again.
    if (!ec && replicas_unsynced()) {
      dog_.ctx_.observe.log(log_level::warning, "renewal of ", size_, " lease(s): no replica acknowledged it");
    }
    if (refusal_ == errc::cross_slot) dog_.cross_slot_refused();
    dog_.batch_done(this);
  }

 private:
  watchdog& dog_;
  std::uint32_t index_[max_keys] = {};
  std::uint32_t generation_[max_keys] = {};
  bool flags_[max_keys] = {};
  std::size_t size_ = 0;
  std::size_t replies_ = 0;
  std::int64_t sent_ns_ = 0;
  decimal lease_;
  std::uint32_t route_ = 0;
  std::uint32_t node_ = 0;
  hold_field kind_ = hold_field::plain;
  std::error_code refusal_;  // the server's error reply, if it refused the batch
  char reason_[160] = {};    // its text (cut), for the log
  std::size_t reason_size_ = 0;
};

watchdog::watchdog(op_context& ctx, host& client, const asio::any_io_executor& ex, std::size_t nodes)
    : ctx_(ctx), host_(client), timer_(ex), windows_(nodes, max_in_flight_per_node) {}

std::int64_t watchdog::third_of_lease_ns() const {
  return std::chrono::nanoseconds(std::chrono::milliseconds(ctx_.settings().watchdog_ms) / 3).count();
}

void watchdog::watch(std::int64_t deadline_ns, std::int64_t now_ns) { arm_at(deadline_ns, now_ns); }

void watchdog::renew_from(std::int64_t now_ns) {
  if (renew_at_ns_ == 0) renew_at_ns_ = now_ns + third_of_lease_ns();
  arm_at(renew_at_ns_, now_ns);
}

void watchdog::arm_at(std::int64_t at_ns, std::int64_t now_ns) {
  if (stopped_ || (armed_ && armed_at_ns_ <= at_ns)) return;
  // Setting the expiry cancels a wait armed for later: its handler sees operation_aborted and leaves
  // `armed_` to this one. (One that had already fired runs early, which finds nothing due.)
  armed_ = true;
  armed_at_ns_ = at_ns;
  timer_.expires_after(std::chrono::nanoseconds(std::max<std::int64_t>(0, at_ns - now_ns)));
  // The client's lifeline keeps it, and so this watchdog (its member), alive until the handler ran.
  timer_.async_wait([this, life = ctx_.lifeline()](std::error_code ec) {
    if (ec || stopped_) return;
    armed_ = false;
    run();
  });
}

void watchdog::stop() {
  stopped_ = true;
  timer_.cancel();
}

void watchdog::batch_done(renew_batch* b) {
  const std::uint32_t node = b->node();
  batches_.give_back(b);
  windows_.done(node);
  send_waiting(node);
}

void watchdog::cross_slot_refused() {
  if (stopped_ || !host_.cross_slot_refused()) return;  // routes were slots already: nothing to split
  ctx_.observe.log(log_level::info, "the server enforces hash slots: renewals go slot by slot from now on");
  // What waits was batched the old way, and would be refused too: build it again, and send now.
  while (request* waiting = windows_.take_any_waiting()) {
    auto* batch = static_cast<renew_batch*>(waiting);
    batch->unqueue();
    batches_.give_back(batch);
  }
  run(true);
}

void watchdog::send_waiting(std::uint32_t node) {
  while (!stopped_) {
    auto* batch = static_cast<renew_batch*>(windows_.take(node));
    if (batch == nullptr) return;
    if (batch->send()) {
      windows_.sent(node);
    } else {
      batches_.give_back(batch);  // nothing left in it to renew
    }
  }
}

void watchdog::send_waiting() {
  for (std::uint32_t node = 0; node < windows_.nodes(); ++node) send_waiting(node);
}

void watchdog::run(bool renew_now) {
  const std::int64_t now = port::monotonic_ns();
  const lease_margin& margin = ctx_.settings().margin;
  const bool renew = renew_now || (renew_at_ns_ != 0 && now >= renew_at_ns_);
  std::int64_t next_ns = std::numeric_limits<std::int64_t>::max();
  // The batches being filled: one per (route, renewal kind) seen so far in this run.
  constexpr std::size_t max_open = 8;
  renew_batch* open[max_open] = {};
  std::size_t open_count = 0;
  bool watchdog_holds = false;
  for (std::uint32_t i = 0; i < ctx_.held_locks().capacity(); ++i) {
    const hold& h = ctx_.held_locks()[i];
    if (!watched(h)) continue;
    const std::int64_t deadline = valid_until(h, margin);
    if (now >= deadline) {
      // Not confirmed in time: the server may expire it from the end of its margin on, so the client
      // stops counting on it now, whether or not a renewal is still on its way.
      host_.lease_lost(i);
      continue;
    }
    next_ns = std::min(next_ns, deadline);
    if (!h.watchdog) continue;
    watchdog_holds = true;
    // Still in a batch an earlier run built, waiting for its node's window: it goes out in its turn,
    // ahead of what this run builds (rebuilding it here would put it at the back again).
    if (!renew || h.renewal_queued) continue;
    const std::uint32_t route = host_.route_of(h.name);
    const hold_field kind = renewal_kind(h.field);
    std::size_t slot = 0;
    while (slot < open_count && !open[slot]->takes(route, kind)) ++slot;
    if (slot == open_count) {
      if (open_count == max_open) {  // many routes: queue the fullest-so-far to make room
        windows_.push(open[0]->node(), *open[0]);
        open[0] = open[--open_count];
        slot = open_count;
      }
      open[slot] = batches_.take(*this);
      open[slot]->clear(route, host_.node_of(h.name), kind);
      ++open_count;
    }
    open[slot]->add(i);
    if (open[slot]->full()) {
      windows_.push(open[slot]->node(), *open[slot]);
      open[slot] = open[--open_count];
    }
  }
  for (std::size_t s = 0; s < open_count; ++s) windows_.push(open[s]->node(), *open[s]);
  send_waiting();
  if (!watchdog_holds) {
    renew_at_ns_ = 0;
  } else if (renew) {
    renew_at_ns_ = now + third_of_lease_ns();
  }
  if (renew_at_ns_ != 0) next_ns = std::min(next_ns, renew_at_ns_);
  if (next_ns != std::numeric_limits<std::int64_t>::max()) arm_at(next_ns, now);
}

}  // namespace deadbolt::detail
