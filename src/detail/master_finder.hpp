// Where a single server's connections go when the URL names sentinels (src/sentinel/): an address
// source for each connection, and the news of a failover. A build without Sentinel
// (DEADBOLT_SENTINEL=OFF) has none, and config::validate() refuses sentinel URLs there.
#pragma once

#include <memory>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio.hpp"
#include "detail/address_source.hpp"

namespace deadbolt::detail {

class master_finder {
 public:
  /// Told when the sentinels announce a new master. Runs on the executor, inside a connection's
  /// reply routing.
  class listener {
   public:
    virtual void on_master_switched() = 0;

   protected:
    ~listener() = default;
  };

  virtual ~master_finder() = default;
  /// An address source for one more connection.
  virtual std::unique_ptr<address_source> addresses() = 0;
  /// Starts following failovers (again: nothing).
  virtual void watch() = 0;
  virtual void stop() = 0;
};

}  // namespace deadbolt::detail
