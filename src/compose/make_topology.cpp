// The composition root: turns a validated configuration into the topology a client runs on. The only
// file that knows the topology wings (src/cluster/, src/sentinel/); a build without one (DEADBOLT_CLUSTER
// or DEADBOLT_SENTINEL off) does not compile or link it, and config::validate() has refused its URLs.
#include "engine/single_node.hpp"
#include "engine/topology.hpp"

#ifndef DEADBOLT_HAS_CLUSTER
#error "DEADBOLT_HAS_CLUSTER and DEADBOLT_HAS_SENTINEL must be defined (src/CMakeLists.txt)"
#endif
#if DEADBOLT_HAS_CLUSTER
#include "cluster/cluster_topology.hpp"
#endif
#if DEADBOLT_HAS_SENTINEL
#include "sentinel/sentinel_node.hpp"
#endif

namespace deadbolt::detail {

std::unique_ptr<topology> make_topology(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg) {
#if DEADBOLT_HAS_CLUSTER
  if (ep.is_cluster()) return std::make_unique<cluster_topology>(ex, ep, cfg);
#endif
#if DEADBOLT_HAS_SENTINEL
  if (ep.is_sentinel()) return std::make_unique<sentinel_node>(ex, ep, cfg);
#endif
  return std::make_unique<single_node>(ex, ep, cfg);
}

}  // namespace deadbolt::detail
