// Which optional wings this build of the library has (the DEADBOLT_CLUSTER, DEADBOLT_SENTINEL and
// DEADBOLT_TLS options), for config::validate(), which refuses a URL that needs a missing one. Declared
// here, defined by the composition root (src/compose/composition_root.cpp): the only place that reads
// the build's options.
#pragma once

#include <memory>
#include <string>
#include <system_error>

#include "deadbolt/config.hpp"

namespace deadbolt::detail {

struct build_features {
  bool cluster;   ///< redis+cluster:// URLs
  bool sentinel;  ///< redis+sentinel:// URLs
  bool tls;       ///< rediss:// URLs
};

const build_features& this_build() noexcept;

/// The TLS context of `settings` (the CA, certificate and key files read and checked), into `out`.
/// On failure, `why` (if given) names the file and the problem. errc::not_built without TLS.
std::error_code make_tls_context(const tls_config& settings, std::shared_ptr<const secure_transport>& out,
                                 std::string* why);

}  // namespace deadbolt::detail
