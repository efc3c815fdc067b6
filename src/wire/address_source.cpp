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

bool static_addresses::name_replicas(const std::vector<server_address>& replicas) {
  if (replicas == replicas_) return false;
  replicas_ = replicas;
  return true;
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

std::vector<server_address> addresses_of(const std::vector<endpoint::seed>& seeds) {
  std::vector<server_address> out;
  out.reserve(seeds.size());
  for (const auto& s : seeds) {
    server_address where;
    where.host = s.host;
    where.port = s.port;
    where.numeric = is_ip_literal(s.host);
    out.push_back(std::move(where));
  }
  return out;
}

bool is_ip_literal(std::string_view host) noexcept {
  std::error_code not_numeric;
  asio::ip::make_address(std::string(host), not_numeric);
  return !not_numeric;
}

}  // namespace deadbolt::detail
