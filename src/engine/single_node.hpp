// One standalone server: one command connection (opened with the first request) and one subscriber
// connection (opened with the first wait). Every key is route 0, until the server refuses a script
// whose keys are in different hash slots (a cluster node, proxy or managed service behind redis://);
// from then on a key's route is its slot. A server found through Sentinel is the same topology with
// a master_finder, which gives every connection's address and may hold an acquire until the master
// is confirmed: src/sentinel/sentinel_node.hpp adds the failover handling (the composition root,
// src/compose/, picks the variant).
#pragma once

#include <memory>
#include <utility>

#include "base/key_slot.hpp"
#include "engine/master_finder.hpp"
#include "engine/topology.hpp"
#include "pubsub/subscriber.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class single_node : public topology {
 public:
  /// One server at the URL's address.
  single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
      : single_node(std::move(ex), ep, cfg, nullptr) {}
  ~single_node() override;

  void submit(request& r) override;
  std::uint32_t route_of(std::string_view key) const override { return slots_enforced_ ? key_slot(key) : 0; }
  std::uint32_t node_of(std::string_view) const override { return 0; }
  bool cross_slot_refused() override { return !std::exchange(slots_enforced_, true); }
  subscriber& subscriber_for(std::string_view channel) override;
  subscriber* existing_subscriber(std::string_view) const override { return subs_.get(); }
  bool settled() const override;
  void stop_subscribers() override;
  void close() override;

 protected:
  /// One server whose address `finder` gives (null: the URL's). The finder also admits each request
  /// (or holds it until the master is confirmed).
  single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg, std::unique_ptr<master_finder> finder);

  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  std::unique_ptr<master_finder> finder_;  // declared before the connections: it gives their addresses
  std::shared_ptr<connection> commands_;
  std::shared_ptr<subscriber> subs_;
  bool started_ = false;

 private:
  std::unique_ptr<address_source> addresses() const;
  void start_watch() {
    if (finder_) finder_->watch();
  }

  // The server refused a script mixing hash slots: it enforces them (a cluster node or proxy, a
  // managed service). Learned rather than probed: a plain server keeps renewing 100 keys per script.
  bool slots_enforced_ = false;
};

}  // namespace deadbolt::detail
