// The seam where TLS plugs into a connection's byte stream. The stream knows only these interfaces;
// the TLS wing (src/tls/) implements them, and the composition root (src/compose/) makes the client's
// secure_transport when the URL says rediss://. A build without TLS has no implementation, and its
// streams are all plain.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <system_error>
#include <utility>

#include "deadbolt/port/asio_core.hpp"
#include "memory/handler_memory.hpp"

namespace deadbolt::detail {

/// A completion of one of the stream's operations, of one concrete type, so that a layer behind a
/// virtual call can start Asio operations with it: a function and its target, what keeps the target
/// alive, a generation (the target ignores stale completions) and the operation's fixed memory.
class io_done {
 public:
  using function = void (*)(void* target, std::uint64_t generation, std::error_code ec, std::size_t bytes);
  using allocator_type = handler_allocator<char>;

  io_done(function fn, std::shared_ptr<void> keep, std::uint64_t generation, handler_memory& memory) noexcept
      : fn_(fn), target_(keep.get()), keep_(std::move(keep)), generation_(generation), memory_(&memory) {}

  allocator_type get_allocator() const noexcept { return allocator_type(*memory_); }
  void operator()(std::error_code ec, std::size_t bytes = 0) { fn_(target_, generation_, ec, bytes); }

 private:
  function fn_;
  void* target_;
  std::shared_ptr<void> keep_;
  std::uint64_t generation_;
  handler_memory* memory_;
};

/// One connection attempt's encryption over its socket. A new attempt gets a new layer; operations in
/// flight keep theirs alive (a reconnect never frees what an aborted operation still touches).
class secure_layer {
 public:
  virtual ~secure_layer() = default;
  /// Before the handshake: the server the address source named (`host`, before resolving) is the one
  /// whose certificate must match.
  virtual std::error_code prepare(const std::string& host) = 0;
  virtual void async_handshake(io_done done) = 0;
  virtual void async_read_some(asio::mutable_buffer into, io_done done) = 0;
  virtual void async_write(asio::const_buffer bytes, io_done done) = 0;
};

/// A client's way to encrypt its connections (its TLS context), shared by all of them.
class secure_transport {
 public:
  using socket_type = asio::generic::stream_protocol::socket;
  virtual ~secure_transport() = default;
  /// A fresh layer over `socket`, just connected.
  virtual std::shared_ptr<secure_layer> layer_over(socket_type& socket) const = 0;
};

}  // namespace deadbolt::detail
