// Where a single server's connections go when the URL names sentinels (src/sentinel/): an address
// source for each connection, the news of a failover, and whether an acquire may go to the master
// the client knows (or must wait until the sentinels were asked again). A build without Sentinel
// (DEADBOLT_SENTINEL=OFF) has none, and config::validate() refuses sentinel URLs there.
#pragma once

#include <memory>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pipeline/request.hpp"
#include "wire/address_source.hpp"
#include "wire/connection.hpp"

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
  /// Fails the requests it holds with errc::shutting_down, and closes its own connections.
  virtual void stop() = 0;

  /// The command connection, whose server the finder confirms (ROLE) and to which it hands the
  /// requests it held. Called once, before anything is submitted.
  virtual void attach(std::shared_ptr<connection> commands) = 0;
  /// Whether `r` may go to the command connection now. False: the finder keeps it (an acquire while
  /// what the client knows of the master is too old) and submits it once the sentinels were asked and
  /// ROLE confirmed the master, or fails it at its deadline; never from inside this call.
  virtual bool admit(request& r) = 0;
  /// The command connection is ready: its server was named by the sentinels (or announced by them)
  /// and confirmed by ROLE.
  virtual void commands_ready() = 0;
  /// Some request is held (admit() said false and it has not gone or failed yet).
  virtual bool holding() const = 0;
};

}  // namespace deadbolt::detail
