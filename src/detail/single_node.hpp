// One standalone server: one command connection (opened with the first request) and one subscriber
// connection (opened with the first wait). Every key is route 0.
#pragma once

#include <memory>

#include "detail/connection.hpp"
#include "detail/subscriber.hpp"
#include "detail/topology.hpp"

namespace deadbolt::detail {

class single_node final : public topology {
 public:
  single_node(asio::any_io_executor ex, const endpoint& ep, const config& cfg);
  ~single_node() override;

  void submit(request& r) override;
  std::uint32_t route_of(std::string_view) const override { return 0; }
  subscriber& subscriber_for(std::string_view channel) override;
  subscriber* existing_subscriber(std::string_view) const override { return subs_.get(); }
  bool settled() const override;
  void stop_subscribers() override;
  void close() override;

 private:
  asio::any_io_executor executor_;
  endpoint ep_;
  const config& cfg_;
  std::shared_ptr<connection> commands_;
  std::shared_ptr<subscriber> subs_;
  bool started_ = false;
};

}  // namespace deadbolt::detail
