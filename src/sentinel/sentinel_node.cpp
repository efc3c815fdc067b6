#include "sentinel/sentinel_node.hpp"

#include "deadbolt/error.hpp"
#include "sentinel/sentinel_finder.hpp"

namespace deadbolt::detail {

sentinel_node::sentinel_node(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg)
    : single_node(ex, ep, cfg, std::make_unique<sentinel_finder>(ex, ep, cfg, static_cast<master_finder::listener&>(*this))) {
  commands_->set_redirect_handler(this);
  commands_->set_listener(this);
  finder_->attach(commands_);
}

sentinel_node::~sentinel_node() {
  *alive_ = false;
  close();
}

void sentinel_node::on_redirect(request& r, std::string_view) {
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

void sentinel_node::on_master_switched() {
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

void sentinel_node::on_connected() {
  demoted_ = false;
  finder_->commands_ready();
}

}  // namespace deadbolt::detail
