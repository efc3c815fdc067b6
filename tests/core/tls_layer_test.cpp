// A TLS connection's OpenSSL state keeps its record buffers: Asio turns SSL_MODE_RELEASE_BUFFERS on,
// which frees them whenever they run empty and allocates them again for the next record (a malloc and
// a free per read and per write; bench/run lock_uncontended_tls counts them).
#include <doctest/doctest.h>

#include <memory>

#include "deadbolt/port/asio.hpp"
#include "tls/tls_context.hpp"
#include "tls/tls_layer.hpp"

#include <openssl/ssl.h>

TEST_CASE("a TLS layer keeps OpenSSL's record buffers between records") {
  std::shared_ptr<const deadbolt::detail::tls_context> context;
  deadbolt::tls_config settings;
  settings.verify_peer = false;  // no CA files needed: the test only makes the state, never connects
  REQUIRE_FALSE(deadbolt::detail::tls_context::make(settings, context));
  asio::io_context io;
  deadbolt::detail::tls_layer::socket_type socket(io);
  deadbolt::detail::tls_layer layer(socket, *context);
  const auto mode = SSL_get_mode(layer.stream().native_handle());
  CHECK((mode & SSL_MODE_RELEASE_BUFFERS) == 0);
  CHECK((mode & SSL_MODE_ENABLE_PARTIAL_WRITE) != 0);  // Asio's other modes stay as they were
}
