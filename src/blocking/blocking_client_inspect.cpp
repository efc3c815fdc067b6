// blocking_client::inspect, in a file of its own: a program that never inspects does not link the
// inspection's operation and readers (see blocking_client_loop.hpp).
#include <string>

#include "blocking/blocking_call.hpp"
#include "blocking/blocking_client_loop.hpp"

namespace deadbolt {

object_info blocking_client::inspect(std::string_view name, std::error_code& ec) {
  return loop_->async->async_inspect(name, detail::through(loop_->gate, ec));
}

object_info blocking_client::inspect(std::string_view name) {
  return detail::or_raise("inspect", std::string(name), [&](std::error_code& ec) { return inspect(name, ec); });
}

}  // namespace deadbolt
