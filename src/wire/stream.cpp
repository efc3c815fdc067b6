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
  // A fresh secure layer per attempt; the last one lives on in its aborted operations, if any.
  layer_.reset();
  if (transport_ && tcp_) layer_ = transport_->layer_over(socket_);
  return {};
}

void stream::async_handshake(const server_address& named, io_done done) {
  if (layer_) {
    if (std::error_code ec = layer_->prepare(named.host)) {
      asio::post(socket_.get_executor(), [done = std::move(done), ec]() mutable { done(ec); });
      return;
    }
    return layer_->async_handshake(std::move(done));
  }
  asio::post(socket_.get_executor(), [done = std::move(done)]() mutable { done(std::error_code()); });
}

}  // namespace deadbolt::detail
