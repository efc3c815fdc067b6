#include "engine/client_core.hpp"

#include <algorithm>
#include <chrono>

#include "base/deadline.hpp"
#include "base/ids.hpp"
#include "base/server_error.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {

// ---- helpers ---------------------------------------------------------------------------------

void scalar_reply::take(const resp::node& n) {
  if (n.depth != 0) return;
  switch (n.type) {
    case resp::type::null: what = kind::nil; break;
    case resp::type::integer:
    case resp::type::blob_string:
    case resp::type::simple_string:
      what = parse_int(n.value, value) ? kind::integer : kind::unexpected;
      break;
    case resp::type::boolean:
      what = kind::integer;
      value = n.value == "t" ? 1 : 0;
      break;
    case resp::type::simple_error:
    case resp::type::blob_error:
      what = kind::error;
      error = server_error_code(n.value);
      break;
    default: what = kind::unexpected; break;
  }
}

// ---- fire-and-forget commands ----------------------------------------------------------------

class fire_and_forget final : public request {
 public:
  explicit fire_and_forget(client_core& core) : core_(core) { key_.reserve(96); }
  void prepare(std::string_view verb, std::string_view key) {
    verb_ = verb;
    key_.assign(key);
    route_key = key_;
  }
  void encode(resp::encoder& e) override { e.command(verb_, key_); }
  void on_node(const resp::node&) override {}
  void on_done(std::error_code) override { core_.pools().of<fire_and_forget>().give_back(this); }

 private:
  client_core& core_;
  std::string_view verb_;
  std::string key_;
};

// ---- the core ----------------------------------------------------------------------------------

client_core::client_core(const asio::any_io_executor& ex, const config& c)
    : op_context(c),
      executor(ex),
      cfg(c),
      config_error(c.validate(ep)),
      id(random_uuid()),
      holds(config_error ? 1 : c.max_held_locks),
      drain_timer(ex),
      dog(*this, *this, ex, config_error ? 1 : c.max_cluster_nodes + 1) {
  settings_ = {id,
               "publish",
               watchdog_ms(),
               latch_ttl_ms(),
               cfg.fair_wait_timeout.count(),
               cfg.replica_sync != replica_sync_mode::off,
               cfg.replica_sync_retries,
               cfg.replica_sync_retry_delay.count(),
               {std::chrono::nanoseconds(cfg.lease_margin).count(), cfg.clock_drift_factor}};
  if (config_error) {
    observe.log(log_level::error, "config refused: ", config_error);
    return;
  }
  topo_ = make_topology(ex, ep, cfg);
}

client_core::~client_core() = default;  // the topology closes its connections

std::int64_t client_core::latch_ttl_ms() const {
  // Long enough for every retry of one unlock (Redisson: (timeout + retry delay) * attempts), each
  // one's WAIT included.
  const std::int64_t sync_ms = cfg.replica_sync == replica_sync_mode::off ? 0 : cfg.replica_sync_timeout.count();
  const std::int64_t sends = std::max<std::int64_t>(4, cfg.replica_sync_retries + 2);
  return (cfg.command_timeout.count() + sync_ms) * sends + 1000;
}

void client_core::submit(request& r) {
  if (closed_ || !topo_) {
    const std::error_code ec = closed_ ? errc::shutting_down : config_error;
    asio::post(executor, [self = shared_from_this(), &r, ec] { r.on_done(ec); });
    return;
  }
  topo_->submit(r);
}

void client_core::complete_later(completion& done, std::error_code ec, std::int64_t value) {
  asio::post(executor, [self = shared_from_this(), &done, ec, value] { done.complete(ec, value); });
}

void client_core::send_and_forget(std::string_view verb, std::string_view key) {
  fire_and_forget* f = pools().of<fire_and_forget>().take(*this);
  f->prepare(verb, key);
  submit(*f);
}

std::error_code client_core::refusal() const {
  if (config_error) return config_error;
  return stopped ? make_error_code(errc::shutting_down) : std::error_code();
}

std::uint32_t client_core::hold_slot(std::string_view name, std::int64_t owner, hold_field field, std::int64_t now_ns) {
  const std::uint32_t i = holds.find_or_insert(name, owner, field);
  if (i != hold_table::none) return i;
  // Full: of live holds only. Leases that ended (fixed leases run out, lost ones were reported to
  // their owners) make room.
  for (std::uint32_t j = 0; j < holds.capacity(); ++j) {
    if (holds[j].in_use && (holds[j].lost || lapsed(holds[j], now_ns))) holds.release(j);
  }
  return holds.find_or_insert(name, owner, field);
}

std::uint32_t client_core::record_acquired(std::string_view name, std::int64_t owner, hold_field field,
                                           std::int64_t lease_ms, std::int64_t sent_ns, std::int64_t server_count) {
  const std::int64_t now = port::monotonic_ns();
  const std::uint32_t i = hold_slot(name, owner, field, now);
  if (i == hold_table::none) return i;
  hold& h = holds[i];
  if (h.lost || lapsed(h, now)) {  // the owner's earlier holds ended: this is a fresh acquisition
    h.count = 0;
    h.watchdog = false;
    h.lost = false;
  }
  if (h.count == 0) h.acquired_ns = sent_ns;
  ++h.count;
  h.server = server_count;  // more than count: holds the owner was never told of (see unlock_op)
  h.uncertain = false;
  // A hold the watchdog renews stays renewed at its lease, whatever a re-entry asked for.
  h.watchdog = h.watchdog || lease_ms <= 0;
  h.lease_ms = h.watchdog ? watchdog_ms() : lease_ms;
  h.confirmed_ns = sent_ns;
  h.expires_ns = h.watchdog ? 0 : sent_ns + lease_ms * ms_to_ns;
  // The watchdog's run also ends holds whose deadline passes: it runs by then (a re-arm only when this
  // deadline comes before the run already armed, and for the first held lock under the watchdog).
  if (h.watchdog) dog.renew_from(now);
  dog.watch(valid_until(h, settings_.margin), now);
  return i;
}

void client_core::note_unknown(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                               std::int64_t sent_ns) {
  const std::int64_t now = port::monotonic_ns();
  const std::uint32_t i = hold_slot(name, owner, field, now);
  if (i == hold_table::none) return;  // nothing to remember it in: it ends with its lease
  hold& h = holds[i];
  if (h.lost || lapsed(h, now)) {
    h.count = 0;
    h.watchdog = false;
    h.lost = false;
  }
  h.uncertain = true;
  if (h.count == 0) {  // only the unknown acquire itself: not renewed, gone when its lease would end
    h.watchdog = false;
    h.lease_ms = lease_ms > 0 ? lease_ms : watchdog_ms();
    h.expires_ns = sent_ns + h.lease_ms * ms_to_ns;
  }
}

void client_core::unlock_failed(std::string_view name, std::int64_t owner, hold_field field) {
  const std::uint32_t i = holds.find(name, owner, field);
  if (i == hold_table::none) return;
  if (holds[i].count > 1 && !holds[i].lost) {
    lease_lost(i);  // the holds that remain are no longer renewed either: their owner must know
  } else {
    holds.release(i);
  }
}

void client_core::lease_lost(std::uint32_t index) {
  hold& h = holds[index];
  if (h.lost) return;
  h.lost = true;
  if (const metrics_calls* m = observe.metrics()) m->on_lease_lost(h.name);
  observe.log(log_level::warning, "lease lost: lock ", h.name, ", owner ", h.owner);
  // The entry stays (marked lost) until its owner unlocks, so the owner can still ask.
  if (const std::shared_ptr<const lease_lost_handler> handler = on_lost) {
    // Our own share of the handler: it may drop itself while it runs (shutdown(), a new handler).
    observe.contain("lease-lost handler", [&] { (*handler)(h.name, h.owner); });
  }
}

void client_core::hold_released(std::uint32_t index) {
  const hold& h = holds[index];
  if (const metrics_calls* m = observe.metrics()) {
    m->on_release(h.name, std::chrono::nanoseconds(port::monotonic_ns() - h.acquired_ns));
  }
  holds.release(index);
}

void client_core::lease_restarted(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                                  std::int64_t sent_ns) {
  const std::uint32_t i = holds.find(name, owner, field);
  if (i == hold_table::none) return;
  hold& h = holds[i];
  if (!watched(h) || h.watchdog || lease_ms <= 0) return;
  h.lease_ms = lease_ms;
  h.confirmed_ns = sent_ns;
  h.expires_ns = sent_ns + lease_ms * ms_to_ns;
  dog.watch(valid_until(h, settings_.margin), port::monotonic_ns());
}

void client_core::close() {
  if (closed_) return;
  closed_ = true;
  drain_timer.cancel();
  if (topo_) topo_->close();
}

void client_core::stop_waiters() {
  if (topo_) topo_->stop_subscribers();
}

void client_core::drain(std::int64_t until_ns) {
  if (closed_) return;
  // Only a working connection can deliver: a server that is down or silent is not waited for.
  if (!topo_ || topo_->settled() || port::monotonic_ns() >= until_ns) {
    return close();
  }
  drain_timer.expires_after(std::chrono::milliseconds(5));
  drain_timer.async_wait([self = shared_from_this(), until_ns](std::error_code ec) {
    if (!ec) self->drain(until_ns);
  });
}

// ---- entry points --------------------------------------------------------------------------------

std::shared_ptr<client_core> make_client_core(const asio::any_io_executor& ex, const config& cfg,
                                              std::shared_ptr<void> keep_alive) {
  auto core = std::make_shared<client_core>(ex, cfg);
  core->keep_alive = std::move(keep_alive);
  return core;
}

void shutdown(client_core& core) {
  if (core.stopped) return;
  core.stopped = true;
  core.dog.stop();
  // The handler often holds handles, and so the core: dropping it here breaks that cycle. It may be
  // running (shutdown() from inside it), and its handles may be the core's last owners: it goes on
  // a turn of its own, when no engine code is under way.
  if (core.on_lost) asio::post(core.executor, [dropped = std::move(core.on_lost)] {});
  core.on_lost = nullptr;
  // Parked waiters wake with shutting_down now (a fair waiter leaves its queue on the way out);
  // whatever they and the running operations still send goes out before the connection closes.
  core.stop_waiters();
  const std::int64_t limit_ns = std::chrono::nanoseconds(core.cfg.command_timeout).count();
  asio::post(core.executor, [self = core.shared_from_this(), until = port::monotonic_ns() + limit_ns] {
    self->drain(until);
  });
}

std::error_code config_error(const client_core& core) { return core.config_error; }
const std::string& client_id(const client_core& core) { return core.id; }
std::chrono::milliseconds watchdog_lease(const client_core& core) { return core.cfg.watchdog_timeout; }
void set_lease_lost_handler(client_core& core, lease_lost_handler handler) {
  if (core.stopped) return;  // after shutdown it would never be called, only kept
  // The one it replaces goes on a turn of its own, as in shutdown().
  if (core.on_lost) asio::post(core.executor, [dropped = std::move(core.on_lost)] {});
  core.on_lost = handler ? std::make_shared<const lease_lost_handler>(std::move(handler)) : nullptr;
}

op_context& context_of(client_core& core) { return core; }

void cancel_operation(client_core&, op_ref ref) {
  auto* op = static_cast<operation*>(ref.op);
  if (op != nullptr && op->generation == ref.generation) op->cancel();
}

}  // namespace deadbolt::detail
