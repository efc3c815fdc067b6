// The composition root's answer to "what does this build have": the build's options, read here only.
#include "config/build_features.hpp"

#include "deadbolt/error.hpp"

#ifndef DEADBOLT_HAS_TLS
#error "DEADBOLT_HAS_CLUSTER, DEADBOLT_HAS_SENTINEL and DEADBOLT_HAS_TLS must be defined (src/CMakeLists.txt)"
#endif
#if DEADBOLT_HAS_TLS
#include "tls/tls_context.hpp"
#endif

namespace deadbolt::detail {

const build_features& this_build() noexcept {
  static constexpr build_features features{DEADBOLT_HAS_CLUSTER != 0, DEADBOLT_HAS_SENTINEL != 0, DEADBOLT_HAS_TLS != 0};
  return features;
}

std::error_code make_tls_context(const tls_config& settings, std::shared_ptr<const secure_transport>& out,
                                 std::string* why) {
#if DEADBOLT_HAS_TLS
  std::shared_ptr<const tls_context> context;
  const std::error_code ec = tls_context::make(settings, context, why);
  out = std::move(context);
  return ec;
#else
  (void)settings;
  (void)out;
  if (why != nullptr) *why = "this build has no TLS (DEADBOLT_TLS=OFF)";
  return errc::not_built;
#endif
}

}  // namespace deadbolt::detail
