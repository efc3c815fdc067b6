// The blocking client (its loop: blocking_client_loop.hpp). Its own calls are the client's async ones
// with the blocking token. The other kinds' factories and inspect() are in files of their own.
#include "deadbolt/blocking.hpp"

#include <utility>

#include "blocking/blocking_call.hpp"
#include "blocking/blocking_client_loop.hpp"

namespace deadbolt {

blocking_client::blocking_client(const config& cfg) : loop_(std::make_unique<loop>(cfg)) {}
blocking_client::~blocking_client() = default;

std::error_code blocking_client::config_error() const { return loop_->async->config_error(); }
const std::string& blocking_client::id() const { return loop_->async->id(); }

std::error_code blocking_client::connect() {
  std::error_code ec;
  loop_->async->async_connect(detail::through(loop_->gate, ec));
  return ec;
}

blocking_lock blocking_client::lock(std::string_view name) { return {loop_->async->lock(name), loop_->gate}; }

void blocking_client::on_lease_lost(lease_lost_handler handler) { loop_->async->on_lease_lost(std::move(handler)); }

}  // namespace deadbolt
