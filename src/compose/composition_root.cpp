// The composition root: the only file that knows the wings and reads the build's options
// (DEADBOLT_HAS_*, set by src/CMakeLists.txt from DEADBOLT_CLUSTER, DEADBOLT_SENTINEL and DEADBOLT_TLS).
// It turns a validated configuration into the topology a client runs on, tells config::validate()
// what this build has, and makes the TLS context. A build without a wing does not compile or link
// it, and config::validate() has refused its URLs.
#include "config/build_features.hpp"
#include "deadbolt/error.hpp"
#include "engine/single_node.hpp"
#include "engine/topology.hpp"

#if !defined(DEADBOLT_HAS_CLUSTER) || !defined(DEADBOLT_HAS_SENTINEL) || !defined(DEADBOLT_HAS_TLS)
#error "DEADBOLT_HAS_CLUSTER, DEADBOLT_HAS_SENTINEL and DEADBOLT_HAS_TLS must be defined (src/CMakeLists.txt)"
#endif
#if DEADBOLT_HAS_CLUSTER
#include "cluster/cluster_topology.hpp"
#endif
#if DEADBOLT_HAS_SENTINEL
#include "sentinel/sentinel_node.hpp"
#endif
#if DEADBOLT_HAS_TLS
#include "tls/tls_context.hpp"
#endif

namespace deadbolt::detail {

const build_features& this_build() noexcept {
  static constexpr build_features features{DEADBOLT_HAS_CLUSTER != 0, DEADBOLT_HAS_SENTINEL != 0, DEADBOLT_HAS_TLS != 0};
  return features;
}

std::unique_ptr<topology> make_topology(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg) {
#if DEADBOLT_HAS_CLUSTER
  if (ep.is_cluster()) return std::make_unique<cluster_topology>(ex, ep, cfg);
#endif
#if DEADBOLT_HAS_SENTINEL
  if (ep.is_sentinel()) return std::make_unique<sentinel_node>(ex, ep, cfg);
#endif
  return std::make_unique<single_node>(ex, ep, cfg);
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
