#include "wire/stream.hpp"

#include "deadbolt/port/hooks.hpp"

namespace deadbolt::detail {

std::error_code stream::open(const server_address& where, asio::generic::stream_protocol::endpoint& target) {
  close();
  tcp_ = where.kind == server_address::transport::tcp;
  if (tcp_) {
    std::error_code ec;
    const asio::ip::address address = asio::ip::make_address(where.host, ec);
    if (ec) return ec;
    target = asio::ip::tcp::endpoint(address, where.port);
  } else {
    // Asio would throw for a path longer than sockaddr_un holds.
    if (where.path.size() >= sizeof(::sockaddr_un::sun_path)) return asio::error::name_too_long;
    target = asio::local::stream_protocol::endpoint(where.path);
  }
  std::error_code ec;
  socket_.open(target.protocol(), ec);
  if (ec) return ec;
  port::close_on_exec(socket_.native_handle());
#if DEADBOLT_HAS_TLS
  // A fresh TLS state per attempt; the last one lives on in its aborted operations, if any.
  tls_.reset();
  if (tls_context_ && tcp_) tls_ = std::make_shared<tls_layer>(socket_, *tls_context_);
#endif
  return {};
}

#if DEADBOLT_HAS_TLS
std::error_code stream::start_tls(const server_address& named) {
  return tls_->prepare(tls_context_->settings(), named.host);
}
#endif

}  // namespace deadbolt::detail
