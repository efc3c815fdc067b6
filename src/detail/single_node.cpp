#include "detail/single_node.hpp"

#if DEADBOLT_HAS_CLUSTER
#include "cluster/cluster_topology.hpp"
#endif

namespace deadbolt::detail {

single_node::single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg)
    : executor_(std::move(ex)),
      ep_(ep),
      cfg_(cfg),
      commands_(std::make_shared<connection>(executor_, ep_, cfg_, connection::role::command)) {}

single_node::~single_node() { close(); }

void single_node::submit(request& r) {
  if (!started_) {
    started_ = true;
    commands_->start();
  }
  commands_->submit(r);
}

subscriber& single_node::subscriber_for(std::string_view) {
  if (!subs_) subs_ = std::make_shared<subscriber>(executor_, ep_, cfg_);
  return *subs_;
}

bool single_node::settled() const { return !started_ || !commands_->ready() || commands_->idle(); }

void single_node::stop_subscribers() {
  if (subs_) subs_->stop();
}

void single_node::close() {
  if (subs_) subs_->stop();
  commands_->stop();
}

std::unique_ptr<topology> make_topology(const asio::any_io_executor& ex, const endpoint& ep, const config& cfg) {
#if DEADBOLT_HAS_CLUSTER
  if (ep.is_cluster()) return std::make_unique<cluster_topology>(ex, ep, cfg);
#endif
  return std::make_unique<single_node>(ex, ep, cfg);
}

}  // namespace deadbolt::detail
