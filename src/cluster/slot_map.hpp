// A cluster's layout: which master serves each of the 16384 slots. The parsers read the answers of
// CLUSTER SHARDS (Redis 7+) and CLUSTER SLOTS (older servers); the table maps a slot to a node index
// that the cluster topology gives its connections. Plain data, no I/O: tests feed real replies.
#pragma once

#include <array>
#include <cstdint>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "base/server_address.hpp"
#include "deadbolt/reply.hpp"

namespace deadbolt::detail {

/// One master, the slot ranges it serves (inclusive), and its replicas that the replying node does not
/// think failed (replica sync expects the master to list them: pipeline/replica_roster.hpp).
struct shard_owner {
  server_address master;
  std::vector<std::pair<std::uint16_t, std::uint16_t>> ranges;
  std::vector<server_address> replicas;
};

/// "127.0.0.1:7001 slots 0-5460, 127.0.0.1:7002 slots 5461-10922, ..." in slot order, for log lines
/// (a master's first three ranges, then how many more).
std::string describe_layout(const std::vector<shard_owner>& shards);

/// The masters in a CLUSTER SHARDS reply (RESP2 or RESP3), skipping shards without slots or without a
/// reachable master (health "fail", which the documentation spells "failed"; endpoint "?"). An empty
/// endpoint means `replying_host`. A replica is named by its "ip" (as its master's ROLE lists it),
/// else its endpoint. errc::protocol_error when the reply has another shape.
std::error_code parse_cluster_shards(const reply& r, std::string_view replying_host, std::vector<shard_owner>& out);

/// The same from a CLUSTER SLOTS reply (which leaves failed replicas out itself).
std::error_code parse_cluster_slots(const reply& r, std::string_view replying_host, std::vector<shard_owner>& out);

class slot_table {
 public:
  static constexpr std::uint16_t no_node = 0xFFFF;

  slot_table() noexcept { owner_.fill(no_node); }

  /// Slots first..last (inclusive, clamped to 16383) are served by `node`.
  void assign(std::uint16_t first, std::uint16_t last, std::uint16_t node) noexcept;
  void assign(std::uint16_t slot, std::uint16_t node) noexcept { assign(slot, slot, node); }
  void clear() noexcept { owner_.fill(no_node); }

  /// The node serving `slot`, or no_node when the layout does not say.
  std::uint16_t node_of(std::uint16_t slot) const noexcept { return owner_[slot & 16383]; }
  /// Every slot has a node.
  bool complete() const noexcept;
  /// `node` serves at least one slot.
  bool serves_any(std::uint16_t node) const noexcept;

 private:
  std::array<std::uint16_t, 16384> owner_;
};

}  // namespace deadbolt::detail
