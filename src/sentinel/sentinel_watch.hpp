// Sentinel's announcements of a failover: a subscriber connection to one sentinel at a time (the
// next one in the URL's list whenever it cannot connect or drops), subscribed to +switch-master.
// When the sentinels switch the URL's master to another server, `switched` runs: the owner moves its
// connections there at once, rather than keep talking to a demoted master that may still accept
// writes for seconds (it is told of its demotion only when it reconnects to the group).
// The connection checks its sentinel's liveness (PING, config::ping_interval / ping_timeout) like
// every subscriber connection; what the watch hears, and when its subscription takes effect or is
// lost, goes into the client's sentinel_view (src/sentinel/sentinel_view.hpp).
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "base/observer.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "sentinel/sentinel_view.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class sentinel_watch final : private connection_listener, private push_handler {
 public:
  /// The one thing a switch asks of the owner.
  class listener {
   public:
    /// A sentinel named a new master for the URL's master name. Runs on the executor, inside the
    /// sentinel connection's reply routing.
    virtual void on_master_switched(const server_address& to) = 0;
    /// The subscription took effect on a new connection (the view may ask for the sentinels to be
    /// asked: announcements made before it were not heard). Runs inside the reply routing too.
    virtual void on_watch_subscribed() = 0;

   protected:
    ~listener() = default;
  };

  /// `view` (the owner's) hears of the subscription, of every sign of life and of the loss.
  sentinel_watch(asio::any_io_executor ex, const endpoint& ep, const config& cfg, listener& owner,
                 sentinel_view& view);
  ~sentinel_watch();

  /// Connects and subscribes; keeps doing so until stop().
  void start();
  void stop();

 private:
  class subscribe_request;

  void on_connected() override;
  void on_disconnected(std::error_code) override;
  void on_push_node(const resp::node& n, bool end_of_reply) override;
  void announced(std::string_view payload);

  std::string master_;
  listener& owner_;
  sentinel_view& view_;
  observer observe_;
  std::shared_ptr<connection> conn_;
  std::unique_ptr<subscribe_request> subscribe_;
  bool started_ = false;
  // The push being read: [kind, channel, payload]; only a +switch-master message's payload is kept.
  std::size_t element_ = 0;
  bool is_message_ = false;
  bool is_subscribe_ = false;
  bool on_switch_channel_ = false;
  bool subscribed_ = false;  // the subscription took effect on this connection
};

}  // namespace deadbolt::detail
