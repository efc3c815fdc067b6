// Host-name resolution, a port hook. Numeric addresses (IPv4, IPv6) and unix sockets never come here:
// the client connects to them directly. The host ports use the system resolver (getaddrinfo through
// Asio); a build with DEADBOLT_SYSTEM_RESOLVER=OFF, or a port without a resolver of its own, has none,
// and a URL naming a host then fails validation with errc::no_resolver. A statically linked program
// without the system resolver carries none of glibc's resolver, NSS or dynamic-loading code.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/port/asio_core.hpp"

namespace deadbolt::port {

class host_resolver {
 public:
  using handler = std::function<void(std::error_code, std::vector<asio::ip::tcp::endpoint>)>;

  virtual ~host_resolver() = default;
  /// Resolves `host` for TCP `port`. `done` runs exactly once, on the executor the resolver was made
  /// with, never inside this call; after cancel() it runs with asio::error::operation_aborted.
  virtual void async_resolve(const std::string& host, std::uint16_t port, handler done) = 0;
  virtual void cancel() noexcept = 0;
};

/// Whether this build can resolve host names at all.
bool resolves_host_names() noexcept;

/// A resolver running on `ex`; null when resolves_host_names() is false.
std::unique_ptr<host_resolver> make_host_resolver(const asio::any_io_executor& ex);

}  // namespace deadbolt::port
