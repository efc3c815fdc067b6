#include "engine/single_node.hpp"

#include "deadbolt/error.hpp"

#if DEADBOLT_HAS_CLUSTER
#include "cluster/cluster_topology.hpp"
#endif
#if DEADBOLT_HAS_SENTINEL
#include "sentinel/sentinel_finder.hpp"
#endif

namespace deadbolt::detail {

#if DEADBOLT_HAS_SENTINEL

single_node::single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      sentinels_(ep_.is_sentinel() ? std::make_unique<sentinel_finder>(executor_, ep_, cfg_,
                                                                        static_cast<master_finder::listener&>(*this))
                                   : nullptr),
      commands_(std::make_shared<connection>(executor_, ep_, addresses(), cfg_, connection::role::command)) {
  if (sentinels_) {
    commands_->set_redirect_handler(this);
    commands_->set_listener(this);
    sentinels_->attach(commands_);
  }
}

single_node::~single_node() {
  *alive_ = false;
  close();
}

std::unique_ptr<address_source> single_node::addresses() const {
  if (sentinels_) return sentinels_->addresses();
  return std::make_unique<static_addresses>(std::vector<server_address>{address_of(ep_)});
}

void single_node::on_redirect(request& r, std::string_view) {
  // READONLY (the only "not run here" a single server sends): resend on a connection to the master
  // the sentinels name now. Posted: this runs inside the connection's reply routing.
  asio::post(executor_, [this, &r, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return r.on_done(errc::shutting_down);
    if (!demoted_) {
      demoted_ = true;
      commands_->drop(errc::not_master);
    }
    commands_->submit(r);
  });
}

void single_node::on_master_switched() {
  // Posted: this runs inside the sentinel connection's reply routing.
  asio::post(executor_, [this, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired()) return;
    if (started_) {
      demoted_ = true;
      commands_->reconnect_now(errc::not_master);
    }
    if (subs_) subs_->reconnect_links(errc::not_master);
  });
}

void single_node::start_watch() {
  if (sentinels_) sentinels_->watch();
}

void single_node::on_connected() {
  demoted_ = false;
  if (sentinels_) sentinels_->commands_ready();
}

bool single_node::admitted(request& r) { return !sentinels_ || sentinels_->admit(r); }

bool single_node::holding() const { return sentinels_ && sentinels_->holding(); }

#else  // config::validate() refused sentinel URLs

single_node::single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      commands_(std::make_shared<connection>(executor_, ep_, addresses(), cfg_, connection::role::command)) {}

single_node::~single_node() { close(); }

std::unique_ptr<address_source> single_node::addresses() const {
  return std::make_unique<static_addresses>(std::vector<server_address>{address_of(ep_)});
}

void single_node::start_watch() {}

#endif

void single_node::submit(request& r) {
  if (!started_) {
    started_ = true;
    start_watch();
    commands_->start();
  }
#if DEADBOLT_HAS_SENTINEL
  if (!admitted(r)) return;  // held until the sentinels confirm the master
#endif
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
#if DEADBOLT_HAS_SENTINEL
  if (holding()) return false;
#endif
  return !started_ || !commands_->ready() || commands_->idle();
}

void single_node::stop_subscribers() {
  if (subs_) subs_->stop();
}

void single_node::close() {
#if DEADBOLT_HAS_SENTINEL
  if (sentinels_) sentinels_->stop();
#endif
  if (subs_) subs_->stop();
  commands_->stop();
}

std::unique_ptr<topology> make_topology(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg) {
#if DEADBOLT_HAS_CLUSTER
  if (ep.is_cluster()) return std::make_unique<cluster_topology>(ex, ep, cfg);
#endif
  return std::make_unique<single_node>(ex, ep, cfg);
}

}  // namespace deadbolt::detail
