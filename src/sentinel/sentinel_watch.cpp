#include "sentinel/sentinel_watch.hpp"

#include "deadbolt/port/hooks.hpp"
#include "sentinel/sentinel_addresses.hpp"
#include "sentinel/sentinel_replies.hpp"

namespace deadbolt::detail {
namespace {

constexpr std::string_view switch_channel = "+switch-master";

}  // namespace

// SUBSCRIBE +switch-master. On a subscriber connection a request is done once written; the
// confirmation comes as a push.
class sentinel_watch::subscribe_request final : public request {
 public:
  bool queued = false;  // still in the connection's queue (it keeps unsent requests across drops)

  void encode(resp::encoder& e) override { e.command("SUBSCRIBE", switch_channel); }
  void on_node(const resp::node&) override {}
  void on_done(std::error_code) override { queued = false; }
};

sentinel_watch::sentinel_watch(asio::any_io_executor ex, const endpoint& ep, const config& cfg, listener& owner,
                               sentinel_view& view)
    : master_(ep.sentinel_master),
      owner_(owner),
      view_(view),
      observe_(cfg),
      conn_(std::make_shared<connection>(std::move(ex), sentinel_endpoint(ep, cfg),
                                         std::make_unique<static_addresses>(addresses_of(ep.sentinels)), cfg,
                                         connection::role::subscriber)),
      subscribe_(std::make_unique<subscribe_request>()) {
  conn_->set_listener(this);
  conn_->set_push_handler(this);
}

sentinel_watch::~sentinel_watch() { stop(); }

void sentinel_watch::start() {
  if (started_) return;
  started_ = true;
  conn_->start();
}

void sentinel_watch::stop() {
  conn_->set_listener(nullptr);
  conn_->set_push_handler(nullptr);
  conn_->stop();
}

void sentinel_watch::on_connected() {
  // Announcements missed while no sentinel was listened to are caught by asking the sentinels once
  // the subscription has taken effect (the owner's view says so); from then on they come here.
  subscribed_ = false;
  if (subscribe_->queued) return;  // left unsent by the last connection: written on this one
  subscribe_->queued = true;
  conn_->submit(*subscribe_);
}

void sentinel_watch::on_disconnected(std::error_code) {
  subscribed_ = false;
  view_.watch_lost();
}

void sentinel_watch::on_push_node(const resp::node& n, bool) {
  if (n.depth == 0) {
    // Anything the sentinel sends (a message, the answer to the connection's PING) is a sign of life.
    if (subscribed_) view_.watch_heard(port::monotonic_ns());
    element_ = 0;
    is_message_ = false;
    is_subscribe_ = false;
    on_switch_channel_ = false;
    return;
  }
  if (n.depth != 1) return;
  switch (element_++) {
    case 0:
      is_message_ = n.value == "message";
      is_subscribe_ = n.value == "subscribe";
      break;
    case 1:
      on_switch_channel_ = n.value == switch_channel;
      if (is_subscribe_ && on_switch_channel_ && !subscribed_) {
        subscribed_ = true;
        view_.watch_subscribed(port::monotonic_ns());
        owner_.on_watch_subscribed();
      }
      break;
    case 2:
      if (is_message_ && on_switch_channel_) announced(n.value);
      break;
    default: break;
  }
}

void sentinel_watch::announced(std::string_view payload) {
  master_switch_news news;
  if (!read_master_switch(payload, master_, news)) return;  // another master's, or not one
  observe_.log(log_level::info, "sentinel: master '", master_, "' switched from ", news.from_host, ":", news.from_port,
               " to ", news.to.host, ":", news.to.port, ": moving the connections");
  owner_.on_master_switched(news.to);
}

}  // namespace deadbolt::detail
