// The engine behind deadbolt::client: configuration, the topology that routes requests and
// subscriptions to connections (src/engine/topology.hpp), the held-lock table and the watchdog that
// renews it (src/engine/watchdog.cpp). Everything here runs on the client's executor.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "base/observer.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/detail/engine.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "engine/holds.hpp"
#include "engine/op_context.hpp"
#include "engine/topology.hpp"
#include "engine/watchdog.hpp"
#include "memory/op_pool.hpp"
#include "pubsub/subscriber.hpp"

namespace deadbolt::detail {

/// The engine; operations see it as their op_context (src/engine/op_context.hpp).
class client_core final : public op_context,
                          public watchdog::host,
                          public std::enable_shared_from_this<client_core> {
 public:
  client_core(const asio::any_io_executor& ex, const config& cfg);
  ~client_core();

  // The entry points of deadbolt/detail/engine.hpp that make, stop and describe a client.
  friend std::shared_ptr<client_core> make_client_core(const asio::any_io_executor& ex, const config& cfg,
                                                       std::shared_ptr<void> keep_alive);
  friend void shutdown(client_core& core);
  friend std::error_code config_error(const client_core& core);
  friend const std::string& client_id(const client_core& core);
  friend std::chrono::milliseconds watchdog_lease(const client_core& core);
  friend void set_lease_lost_handler(client_core& core, lease_lost_handler handler);

 private:
  /// What must outlive everything below (declared first: destroyed last): the blocking client's
  /// io_context, which handles may outlive the client with (make_client_core).
  std::shared_ptr<void> keep_alive;

 public:
  // ---- op_context (what operations see; documented there)
  void submit(request& r) override;
  void complete_later(completion& done, std::error_code ec, std::int64_t value = 0) override;
  void send_and_forget(std::string_view verb, std::string_view key) override;
  subscriber& subscriptions(std::string_view channel) override { return topo_->subscriber_for(channel); }
  subscriber* existing_subscriptions(std::string_view channel) const override {
    return topo_->existing_subscriber(channel);
  }
  hold_table& held_locks() override { return holds; }
  std::uint32_t record_acquired(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                                std::int64_t sent_ns, std::int64_t server_count) override;
  void note_unknown(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                    std::int64_t sent_ns) override;
  void unlock_failed(std::string_view name, std::int64_t owner, hold_field field) override;
  void hold_released(std::uint32_t hold_index) override;
  void lease_restarted(std::string_view name, std::int64_t owner, hold_field field, std::int64_t lease_ms,
                       std::int64_t sent_ns) override;
  std::error_code refusal() const override;
  bool shutting_down() const override { return stopped; }
  bool closed() const override { return closed_; }
  const op_settings& settings() const override {
    if (topo_) settings_.publish = topo_->publish_command();  // a cluster decides it with its layout
    return settings_;
  }
  const asio::any_io_executor& io_executor() const override { return executor; }
  std::shared_ptr<const void> lifeline() const override { return shared_from_this(); }
  op_pools& pools() override { return pools_; }

  // ---- watchdog::host (documented there)
  void lease_lost(std::uint32_t hold_index) override;
  /// Which keys may share a script call: keys of one route may (topology::route_of()).
  std::uint32_t route_of(std::string_view key) const override { return topo_ ? topo_->route_of(key) : 0; }
  /// The node whose connection carries `key`'s requests now (topology::node_of()).
  std::uint32_t node_of(std::string_view key) const override { return topo_ ? topo_->node_of(key) : 0; }
  /// A script mixing hash slots was refused: true if route_of() tells slots apart from now on, and did
  /// not before (topology::cross_slot_refused()).
  bool cross_slot_refused() override { return topo_ && topo_->cross_slot_refused(); }

  std::int64_t watchdog_ms() const { return cfg.watchdog_timeout.count(); }
  std::int64_t latch_ttl_ms() const;

 private:
  asio::any_io_executor executor;
  config cfg;
  endpoint ep;  ///< where the configuration points (filled by config::validate, before config_error)
  std::error_code config_error;
  std::string id;                  ///< client UUID
  /// shutdown() was called: no new operation starts, and running ones end at their next step. The
  /// command connection stays open (if it is up) until what they already decided to send (releases,
  /// unlocks, leaving a fair queue) has been answered, at most config::command_timeout.
  bool stopped = false;
  /// Closes the connections: every request still queued fails with errc::shutting_down.
  void close();
  /// Wakes parked waiters with shutting_down; commands keep flowing.
  void stop_waiters();
  /// Polls until the connections have nothing queued or in flight, then closes.
  void drain(std::int64_t until_ns);

  hold_table holds;
  /// The lease-lost handler, shared: lease_lost() keeps it alive while it runs, whatever it does
  /// meanwhile (shutdown(), on_lease_lost(), destroying its client).
  std::shared_ptr<const lease_lost_handler> on_lost;

  asio::steady_timer drain_timer;

  op_pools pools_;  ///< every operation kind's recycled objects (pools()); here for the destruction order
  watchdog dog;  ///< renews the holds without a fixed lease (src/engine/watchdog.cpp)
  mutable op_settings settings_;
  std::unique_ptr<topology> topo_;  ///< null when the configuration is invalid
  bool closed_ = false;
  /// Finds or inserts, making room from ended leases when the table is full.
  std::uint32_t hold_slot(std::string_view name, std::int64_t owner, hold_field field, std::int64_t now_ns);
};

}  // namespace deadbolt::detail
