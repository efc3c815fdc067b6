#include "wire/address_source.hpp"

#include <string>

#include "deadbolt/error.hpp"
#include "deadbolt/port/asio_core.hpp"

namespace deadbolt::detail {

const std::vector<server_address>& address_source::replicas_named() const noexcept {
  static const std::vector<server_address> none;
  return none;
}

void static_addresses::next(address_sink& sink) {
  if (list_.empty()) {
    sink.on_address(errc::invalid_config, server_address{});
    return;
  }
  const server_address& where = list_[turn_];
  turn_ = (turn_ + 1) % list_.size();
  sink.on_address({}, where);
}

server_address address_of(const endpoint& ep) {
  server_address where;
  if (ep.kind == endpoint::transport::unix_socket) {
    where.kind = server_address::transport::unix_socket;
    where.path = ep.path;
    return where;
  }
  where.host = ep.host;
  where.port = ep.port;
  where.numeric = is_ip_literal(ep.host);
  return where;
}

bool is_ip_literal(std::string_view host) noexcept {
  std::error_code not_numeric;
  asio::ip::make_address(std::string(host), not_numeric);
  return !not_numeric;
}

}  // namespace deadbolt::detail
