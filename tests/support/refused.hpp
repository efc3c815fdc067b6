// Whether an error is "connection refused" as this platform's asynchronous connect reports it.
//
// Under qemu-user 7.2 (Debian 12) the error of a non-blocking connect, which Asio reads with
// getsockopt(SO_ERROR), is the build machine's errno, untranslated: on the mips port a refused connect
// reads 111 (ECONNREFUSED on x86-64 and ARM) where the MIPS ABI's ECONNREFUSED, and so
// asio::error::connection_refused, is 146. On a real board, and wherever the emulator translates it,
// the probe below gives asio::error::connection_refused itself.
#pragma once

#include <system_error>

#include "deadbolt/port/asio.hpp"

namespace deadbolt::test {

/// What plain Asio's async_connect to a closed loopback port (127.0.0.1:1) reports here.
inline std::error_code platform_refused_error() {
  static const std::error_code refused = [] {
    asio::io_context io;
    asio::ip::tcp::socket socket(io);
    std::error_code result;
    socket.async_connect({asio::ip::address_v4::loopback(), 1}, [&](std::error_code ec) { result = ec; });
    io.run();
    return result;
  }();
  return refused;
}

inline bool is_refused(std::error_code ec) {
  return ec == asio::error::connection_refused || (ec && ec == platform_refused_error());
}

}  // namespace deadbolt::test
