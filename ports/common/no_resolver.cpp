// A build without a resolver (DEADBOLT_SYSTEM_RESOLVER=OFF): numeric addresses and unix sockets only.
#include "deadbolt/port/resolver.hpp"

namespace deadbolt::port {

bool resolves_host_names() noexcept { return false; }

std::unique_ptr<host_resolver> make_host_resolver(const asio::any_io_executor&) { return nullptr; }

}  // namespace deadbolt::port
