#include "engine/single_node.hpp"

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

single_node::single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                         std::unique_ptr<master_finder> finder)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      finder_(std::move(finder)),
      commands_(std::make_shared<connection>(executor_, ep_, addresses(), cfg_, connection::role::command)) {}

single_node::~single_node() { close(); }

std::unique_ptr<address_source> single_node::addresses() const {
  if (finder_) return finder_->addresses();
  return std::make_unique<static_addresses>(std::vector<server_address>{address_of(ep_)});
}

void single_node::submit(request& r) {
  if (!started_) {
    started_ = true;
    start_watch();
    commands_->start();
  }
  if (finder_ && !finder_->admit(r)) return;  // held until the sentinels confirm the master
  commands_->submit(r);
}

subscriber& single_node::subscriber_for(std::string_view) {
  if (!subs_) {
    start_watch();
    subs_ = std::make_shared<subscriber>(executor_, ep_, addresses(), cfg_);
  }
  return *subs_;
}

bool single_node::settled() const {
  if (finder_ && finder_->holding()) return false;
  return !started_ || !commands_->ready() || commands_->idle();
}

void single_node::stop_subscribers() {
  if (subs_) subs_->stop();
}

void single_node::close() {
  if (finder_) finder_->stop();
  if (subs_) subs_->stop();
  commands_->stop();
}

}  // namespace deadbolt::detail
