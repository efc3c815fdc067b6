#include "detail/watchdog.hpp"

#include <algorithm>
#include <chrono>

#include "deadbolt/port/hooks.hpp"
#include "detail/client_core.hpp"
#include "detail/deadline.hpp"
#include "detail/script_call.hpp"
#include "lock/lock_protocol.hpp"

namespace deadbolt::detail {

// One script call renewing up to max_keys holds of one route and one renewal kind, answered with
// one flag per hold.
class renew_batch final : public request {
 public:
  static constexpr std::size_t max_keys = 100;  // Redisson's lockWatchdogBatchSize

  explicit renew_batch(client_core& core) : core_(core) {}
  void clear(std::uint32_t route, hold_field kind) {
    size_ = 0;
    route_ = route;
    kind_ = kind;
  }
  bool takes(std::uint32_t route, hold_field kind) const { return route_ == route && kind_ == kind; }
  bool full() const { return size_ == renewal_batch_limit(kind_, max_keys); }
  void add(std::uint32_t hold_index) {
    index_[size_] = hold_index;
    generation_[size_] = core_.holds[hold_index].generation;
    ++size_;
  }
  /// Sends the batch, minus holds released or changed since it was built; false if none is left.
  bool send() {
    std::size_t kept = 0;
    for (std::size_t i = 0; i < size_; ++i) {
      const hold& h = core_.holds[index_[i]];
      if (!h.in_use || h.generation != generation_[i] || !h.watchdog || h.lost) continue;
      index_[kept] = index_[i];
      generation_[kept] = generation_[i];
      ++kept;
    }
    size_ = kept;
    if (size_ == 0) return false;
    sent_ns_ = port::monotonic_ns();
    replies_ = 0;
    lease_.set(core_.watchdog_ms());
    send_script_body = false;
    syncs_replicas = core_.settings().syncs_replicas;
    route_key = core_.holds[index_[0]].name;  // every key of a batch is on one route
    core_.submit(*this);
    return true;
  }

  void encode(resp::encoder& e) override {
    const hold* holds[max_keys];
    for (std::size_t i = 0; i < size_; ++i) holds[i] = &core_.holds[index_[i]];
    encode_renewal(e, *this, kind_, holds, size_, lease_.view(), core_.id);
  }
  void on_node(const resp::node& n) override {
    if (n.depth == 1 && n.type == resp::type::integer && replies_ < size_) flags_[replies_++] = n.value == "1";
  }
  void on_done(std::error_code ec) override {
    // A failed batch changes nothing: the next run retries, and a lease not confirmed for its whole
    // length is declared lost by the run itself.
    std::size_t renewed = 0;
    if (!ec) {
      for (std::size_t i = 0; i < replies_; ++i) {
        hold& h = core_.holds[index_[i]];
        if (!h.in_use || h.generation != generation_[i] || h.lost) continue;  // unlocked meanwhile
        if (flags_[i]) {
          h.confirmed_ns = sent_ns_;
          ++renewed;
        } else {
          core_.lease_lost(index_[i]);
        }
      }
    }
    if (const metrics_calls* m = core_.observe.metrics()) ec ? m->on_renewal_failure(size_, ec) : m->on_renewal(renewed);
    if (ec) core_.observe.log(log_level::warning, "renewal of ", size_, " lease(s) failed: ", ec);
    if (!ec) core_.observe.log(log_level::debug, "renewed ", renewed, " of ", size_, " lease(s)");
    // As Redisson: the renewal stands on the master and the next run renews again.
    if (!ec && replicas_unsynced()) {
      core_.observe.log(log_level::warning, "renewal of ", size_, " lease(s): no replica acknowledged it");
    }
    core_.dog.batch_done(this);
  }

 private:
  client_core& core_;
  std::uint32_t index_[max_keys] = {};
  std::uint32_t generation_[max_keys] = {};
  bool flags_[max_keys] = {};
  std::size_t size_ = 0;
  std::size_t replies_ = 0;
  std::int64_t sent_ns_ = 0;
  decimal lease_;
  std::uint32_t route_ = 0;
  hold_field kind_ = hold_field::plain;
};

watchdog::watchdog(client_core& core) : core_(core), timer_(core.executor) {}

void watchdog::arm(std::int64_t delay_ns) {
  if (armed_ || stopped_) return;
  armed_ = true;
  if (delay_ns < 0) {
    timer_.expires_after(core_.cfg.watchdog_timeout / 3);
  } else {
    timer_.expires_after(std::chrono::nanoseconds(delay_ns));
  }
  timer_.async_wait([self = core_.shared_from_this()](std::error_code ec) {
    watchdog& dog = self->dog;
    if (ec || dog.stopped_) return;
    dog.armed_ = false;
    dog.run();
  });
}

void watchdog::stop() {
  stopped_ = true;
  timer_.cancel();
}

void watchdog::batch_done(renew_batch* b) {
  batches_.give_back(b);
  --in_flight_;
  send_waiting();
}

void watchdog::send_waiting() {
  // A few batches at a time: 10,000 held locks must not turn into one 700 KB write that keeps the
  // server busy for tens of milliseconds and the output buffer large ever after.
  while (!stopped_ && in_flight_ < max_in_flight && !waiting_.empty()) {
    renew_batch* batch = waiting_.front();
    waiting_.pop_front();
    if (batch->send()) {
      ++in_flight_;
    } else {
      batches_.give_back(batch);
    }
  }
}

void watchdog::run() {
  // Batches of the previous run still waiting are stale: this run rebuilds them.
  while (!waiting_.empty()) {
    batches_.give_back(waiting_.front());
    waiting_.pop_front();
  }
  const std::int64_t now = port::monotonic_ns();
  const std::int64_t lease_ns = core_.watchdog_ms() * ms_to_ns;
  std::int64_t next_run_ns = std::chrono::nanoseconds(core_.cfg.watchdog_timeout / 3).count();
  // The batches being filled: one per (route, renewal kind) seen so far in this run.
  constexpr std::size_t max_open = 8;
  renew_batch* open[max_open] = {};
  std::size_t open_count = 0;
  bool any = false;
  for (std::uint32_t i = 0; i < core_.holds.capacity(); ++i) {
    const hold& h = core_.holds[i];
    if (!h.in_use || !h.watchdog || h.lost) continue;
    if (now - h.confirmed_ns >= lease_ns) {
      core_.lease_lost(i);  // not confirmed for a whole lease: it has expired on the server
      continue;
    }
    // A lease whose renewals keep failing may end before the next regular run (holds are confirmed
    // out of step with the runs): run again when it ends, so the holder hears of it then, not later.
    next_run_ns = std::min(next_run_ns, h.confirmed_ns + lease_ns - now);
    any = true;
    const std::uint32_t route = core_.route_of(h.name);
    const hold_field kind = renewal_kind(h.field);
    std::size_t slot = 0;
    while (slot < open_count && !open[slot]->takes(route, kind)) ++slot;
    if (slot == open_count) {
      if (open_count == max_open) {  // many routes: queue the fullest-so-far to make room
        waiting_.push_back(open[0]);
        open[0] = open[--open_count];
        slot = open_count;
      }
      open[slot] = batches_.take(core_);
      open[slot]->clear(route, kind);
      ++open_count;
    }
    open[slot]->add(i);
    if (open[slot]->full()) {
      waiting_.push_back(open[slot]);
      open[slot] = open[--open_count];
    }
  }
  for (std::size_t s = 0; s < open_count; ++s) waiting_.push_back(open[s]);
  send_waiting();
  if (any) arm(next_run_ns);
}

}  // namespace deadbolt::detail
