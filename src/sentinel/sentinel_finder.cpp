#include "sentinel/sentinel_finder.hpp"

#include <chrono>

namespace deadbolt::detail {
namespace {

// A live watch is never unheard for longer than this (the PING's interval and deadline): what the
// client knows older than that is asked again before an acquire. 0 without PINGs: the watch is trusted.
std::int64_t stale_after_ns(const config& cfg) {
  if (cfg.ping_interval.count() <= 0) return 0;
  return std::chrono::duration_cast<std::chrono::nanoseconds>(cfg.ping_interval + cfg.ping_timeout).count();
}

}  // namespace

sentinel_finder::sentinel_finder(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                                 master_finder::listener& owner)
    : executor_(ex),
      ep_(ep),
      cfg_(cfg),
      owner_(owner),
      view_(stale_after_ns(cfg)),
      watch_(ex, ep, cfg, static_cast<sentinel_watch::listener&>(*this), view_),
      gate_(std::move(ex), ep, cfg, preference_, view_, static_cast<sentinel_gate::listener&>(*this)) {}

std::unique_ptr<address_source> sentinel_finder::addresses() {
  return std::make_unique<sentinel_addresses>(executor_, ep_, cfg_, preference_, last_switch_);
}

void sentinel_finder::stop() {
  watch_.stop();
  gate_.stop();
}

void sentinel_finder::on_master_switched(const server_address& to) {
  last_switch_->to = to;
  ++last_switch_->count;
  owner_.on_master_switched();
}

void sentinel_finder::on_master_moved(const server_address* to) {
  if (to != nullptr) return on_master_switched(*to);
  owner_.on_master_switched();  // the sources ask the sentinels again
}

}  // namespace deadbolt::detail
