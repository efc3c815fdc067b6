// What the sentinels say, read without I/O (the requests that carry the questions stream each reply's
// nodes here; tests/core/sentinel_resolution_test.cpp feeds them decoded bytes):
//   - SENTINEL GET-MASTER-ADDR-BY-NAME <name>: [host, port], or nil for a name the sentinel does not
//     know;
//   - SENTINEL REPLICAS <name>: the replicas it knows of the master, each a list (RESP2) or map (RESP3)
//     of fields; kept: where those listen that it does not think down (s_down, o_down), the first
//     `most` of them;
//   - a +switch-master message: "<master name> <old ip> <old port> <new ip> <new port>".
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "base/server_address.hpp"
#include "deadbolt/resp/node.hpp"
#include "pipeline/role_reader.hpp"

namespace deadbolt::detail {

/// Reads SENTINEL GET-MASTER-ADDR-BY-NAME's reply node by node.
class master_address_reader {
 public:
  /// Ready for the next reply.
  void reset() noexcept;
  void take(const resp::node& n);
  /// After the reply's last node (`ec` empty) or the request's failure (`ec`): empty when the reply
  /// named an address (found()); errc::unknown_master for nil; errc::protocol_error for an error
  /// reply or anything but a host and a port (1-65535); else `ec`.
  std::error_code finish(std::error_code ec);
  const server_address& found() const noexcept { return found_; }

 private:
  bool error_ = false;
  bool unknown_ = false;
  std::size_t parts_ = 0;
  server_address found_;
};

/// Reads SENTINEL REPLICAS's reply node by node. A sentinel that refuses the question (an ACL) names
/// none: the master's address stands without them.
class sentinel_replicas_reader {
 public:
  /// At most this many are kept: as many as a master's ROLE is read for (replica sync).
  static constexpr std::size_t most = role_reader::max_listed;

  /// Ready for the next reply.
  void reset();
  void take(const resp::node& n);
  /// After the reply's last node (`ec` empty) or the request's failure (`ec`: none are kept).
  void finish(std::error_code ec);
  /// Where the replicas listen, in the sentinel's order.
  const std::vector<server_address>& replicas() const noexcept { return replicas_; }

 private:
  void keep_pending();

  std::vector<server_address> replicas_;
  std::string key_;
  server_address pending_;
  bool down_ = false;
  std::size_t field_ = 0;
};

/// A +switch-master announcement, read.
struct master_switch_news {
  std::string_view from_host;  // the old master, as announced (for the log)
  std::string_view from_port;
  server_address to;           // the new one
};

/// Reads a +switch-master message's payload. False when it is about another master than `master`,
/// or is not five words with a port (1-65535) last.
bool read_master_switch(std::string_view payload, std::string_view master, master_switch_news& out);

}  // namespace deadbolt::detail
