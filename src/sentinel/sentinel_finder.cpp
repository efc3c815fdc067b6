#include "sentinel/sentinel_finder.hpp"

namespace deadbolt::detail {

sentinel_finder::sentinel_finder(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                                 master_finder::listener& owner)
    : executor_(ex),
      ep_(ep),
      cfg_(cfg),
      owner_(owner),
      watch_(std::move(ex), ep, cfg, static_cast<sentinel_watch::listener&>(*this)) {}

std::unique_ptr<address_source> sentinel_finder::addresses() {
  return std::make_unique<sentinel_addresses>(executor_, ep_, cfg_, last_switch_);
}

void sentinel_finder::on_master_switched(const server_address& to) {
  last_switch_->to = to;
  ++last_switch_->count;
  owner_.on_master_switched();
}

}  // namespace deadbolt::detail
