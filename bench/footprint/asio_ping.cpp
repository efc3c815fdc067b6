// The baseline: a plain standalone-Asio program that PINGs a server (no resolver: a numeric address).
//   asio_ping PORT   exits 0 on +PONG
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <system_error>

#include "deadbolt/port/asio.hpp"

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  asio::io_context io;
  asio::ip::tcp::socket socket(io);
  std::error_code ec;
  const auto port = static_cast<unsigned short>(std::atoi(argv[1]));
  socket.connect({asio::ip::make_address_v4("127.0.0.1", ec), port}, ec);
  if (ec) return 1;
  asio::write(socket, asio::buffer("PING\r\n", 6), ec);
  char reply[16] = {};
  if (ec || asio::read(socket, asio::buffer(reply, 7), ec) != 7 || std::memcmp(reply, "+PONG\r\n", 7) != 0) return 1;
  std::puts("PONG");
  return 0;
}
