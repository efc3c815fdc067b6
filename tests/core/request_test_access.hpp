// What the socket-free suites set on a request that only the transport writes in the library (the
// request's friend: src/pipeline/request.hpp).
#pragma once

#include "pipeline/request.hpp"

namespace deadbolt::detail {

struct request_test_access {
  /// As the cluster routing does after an ASK redirection.
  static void set_asking(request& r, bool on) noexcept { r.route_.asking = on; }
};

}  // namespace deadbolt::detail
