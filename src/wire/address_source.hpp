// Where the next connection attempt goes. The connection asks its address source before every
// connect, so a source may answer differently each time: a fixed list today; a source that asks
// Sentinel for the current master is another implementation of the same interface.
#pragma once

#include <cstddef>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/server_address.hpp"
#include "deadbolt/config.hpp"

namespace deadbolt::detail {

/// Receives the answer of address_source::next().
class address_sink {
 public:
  virtual void on_address(std::error_code ec, const server_address& where) = 0;

 protected:
  ~address_sink() = default;
};

class address_source {
 public:
  virtual ~address_source() = default;
  /// Asks where to connect next. `sink.on_address()` runs once: inside this call (a fixed list) or
  /// later on the connection's executor (a source that asks the network), unless cancel() comes first.
  virtual void next(address_sink& sink) = 0;
  /// Forgets a pending next(): its sink is not called.
  virtual void cancel() noexcept = 0;
  /// For good (the connection stops): also ends whatever the source keeps open to answer.
  virtual void stop() noexcept { cancel(); }
  /// The replicas of the server its last answer named, as far as the source knows (Sentinel: those
  /// the sentinel lists for the master and does not think down); empty when it knows none. Replica
  /// sync asks each one the master does not list whether it was promoted (pipeline/replica_roster.hpp).
  virtual const std::vector<server_address>& replicas_named() const noexcept;
};

/// A fixed list, taken in turn: each next() answers the entry after the previous one.
class static_addresses final : public address_source {
 public:
  explicit static_addresses(std::vector<server_address> list) : list_(std::move(list)) {}

  void next(address_sink& sink) override;
  void cancel() noexcept override {}
  const std::vector<server_address>& replicas_named() const noexcept override { return replicas_; }
  /// The replicas of the list's server as someone else knows them (a cluster node: the layout's); for a
  /// list of one server. True when they changed.
  bool name_replicas(const std::vector<server_address>& replicas);

 private:
  std::vector<server_address> list_;
  std::vector<server_address> replicas_;
  std::size_t turn_ = 0;
};

/// The address part of a parsed URL (credentials and database stay with the login).
server_address address_of(const endpoint& ep);
/// The addresses of a URL's host:port list (a cluster's seeds, the sentinels), in its order.
std::vector<server_address> addresses_of(const std::vector<endpoint::seed>& seeds);

/// A numeric IPv4/IPv6 address literal (no resolver needed to connect to it).
bool is_ip_literal(std::string_view host) noexcept;

}  // namespace deadbolt::detail
