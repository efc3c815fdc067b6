// What subscriber.cpp and the sharded links' file (src/cluster/subscriber_shards.cpp) share of the
// subscriber's insides: its pooled commands and its links.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "pubsub/subscriber.hpp"

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

// One subscriber connection: the classic one, or the one to a master serving sharded channels.
struct subscriber::link final : connection_listener, push_handler {
  link(subscriber& owner, std::uint16_t index, bool sharded, server_address where, std::shared_ptr<connection> c)
      : owner(owner), index(index), sharded(sharded), where(std::move(where)), conn(std::move(c)) {
    for (auto& part : parts) part.reserve(64);
    conn->set_listener(this);
    conn->set_push_handler(this);
  }
  ~link() {
    conn->set_listener(nullptr);
    conn->set_push_handler(nullptr);
    conn->stop();
  }

  void on_connected() override { owner.link_connected(index); }
  void on_disconnected(std::error_code) override { owner.link_lost(index); }
  void on_connect_failed(std::error_code) override { owner.link_lost(index); }
  void on_push_node(const resp::node& n, bool end_of_reply) override {
    if (n.depth == 0) part = 0;
    if (n.depth == 0 && (n.type == resp::type::simple_error || n.type == resp::type::blob_error)) {
      owner.refused(index, n.value);
      return;
    }
    if (n.depth == 1 && part < 3) parts[part++].assign(n.value);
    if (!end_of_reply) return;
    if (part == 3) owner.on_push(index, parts[0], parts[1], parts[2]);
    part = 0;
  }

  subscriber& owner;
  std::uint16_t index;
  bool sharded;
  server_address where;
  std::shared_ptr<connection> conn;
  bool started = false;
  // The push being assembled: kind, channel, payload (copied: nodes are gone after on_push_node).
  std::string parts[3];
  std::size_t part = 0;
};

}  // namespace deadbolt::detail
