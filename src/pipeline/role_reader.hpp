// Reads a ROLE reply node by node. A master answers ["master", offset, [[host, port, offset], ...]]
// (its replicas whose link is up, each where it listens, as the master knows it), a replica
// ["slave", ...], a sentinel ["sentinel", [names]]. Kept: the role, how many replicas a master lists,
// and where the first max_listed of them listen (replica sync: replica_roster.hpp).
#pragma once

#include <array>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <string>

#include "deadbolt/resp/node.hpp"

namespace deadbolt::detail {

/// One replica a master's ROLE lists.
struct listed_replica {
  std::string host;
  std::uint16_t port = 0;  // 0: the entry was not a host and a port
};

class role_reader {
 public:
  static constexpr std::size_t max_listed = 8;

  /// Ready for the next reply (the hosts' strings keep their room: no allocation in a steady state).
  void reset() noexcept {
    index_ = 0;
    error_ = false;
    master_ = false;
    replicas_ = 0;
    entry_ = 0;
    field_ = 0;
  }
  void take(const resp::node& n) {
    if (n.depth == 0) {
      error_ = resp::is_error(n.type);
      return;
    }
    if (n.depth == 1) {
      if (index_ == 0) master_ = n.value == "master";
      if (index_ == 2 && master_ && resp::is_aggregate(n.type)) replicas_ = static_cast<std::int32_t>(n.size);
      ++index_;
      return;
    }
    if (!master_ || index_ != 3) return;  // only a master's third element: its replicas
    if (n.depth == 2) {
      ++entry_;
      field_ = 0;
      if (entry_ <= max_listed) {
        listed_[entry_ - 1].host.clear();
        listed_[entry_ - 1].port = 0;
      }
      return;
    }
    if (n.depth != 3 || entry_ == 0 || entry_ > max_listed) return;
    listed_replica& r = listed_[entry_ - 1];
    if (field_ == 0) {
      r.host.assign(n.value);
    } else if (field_ == 1) {
      unsigned port = 0;
      const char* end = n.value.data() + n.value.size();
      const auto [ptr, ec] = std::from_chars(n.value.data(), end, port);
      r.port = ec == std::errc() && ptr == end && port > 0 && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
    }
    ++field_;
  }

  bool error() const noexcept { return error_; }
  bool master() const noexcept { return master_; }
  /// How many replicas a master lists (0 for any other role).
  std::int32_t replicas() const noexcept { return replicas_; }
  /// How many of them were read (at most max_listed), and each: listed(i).
  std::size_t listed_count() const noexcept {
    return master_ && !error_ ? (entry_ < max_listed ? entry_ : max_listed) : 0;
  }
  const listed_replica& listed(std::size_t i) const noexcept { return listed_[i]; }

 private:
  std::size_t index_ = 0;
  bool error_ = false;
  bool master_ = false;
  std::int32_t replicas_ = 0;
  std::size_t entry_ = 0;  // replicas started so far
  std::size_t field_ = 0;  // fields read of the current one
  std::array<listed_replica, max_listed> listed_{};
};

}  // namespace deadbolt::detail
