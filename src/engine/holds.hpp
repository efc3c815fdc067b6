// The locks this client holds, keyed by (lock name, owner id): our view of each hold count, the lease
// to restore on reentrant unlock, whether the watchdog renews it and whether its lease was lost.
// Capacity is fixed at construction (config::max_held_locks); inserting into a full table fails.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::detail {

/// Which hash field a hold is, and so how the watchdog renews it: "<uuid>:<owner>" (reentrant, fenced,
/// spin, fair), "<uuid>:<owner>:write" (write lock), or a read lock's count field, whose lease lives in
/// per-hold timeout keys (docs/protocol.md §4). One owner may hold a name's write and read locks at once.
enum class hold_field : std::uint8_t { plain, write, read };

struct hold {
  std::string name;
  std::int64_t owner = 0;
  hold_field field = hold_field::plain;
  std::int64_t count = 0;       ///< the holds the caller was told it has (acquired, not yet unlocked)
  std::int64_t server = 0;      ///< the owner's count on the server, as the server last said
  std::int64_t lease_ms = 0;    ///< Redisson's internalLockLeaseTime for this hold
  bool watchdog = false;        ///< renewed every watchdog_timeout / 3
  bool lost = false;            ///< the lease lapsed or the lock was taken away (the owner was told)
  bool uncertain = false;       ///< `server` is unknown (an acquire whose outcome is unknown)
  std::int64_t confirmed_ns = 0;  ///< when the server last confirmed the lease (monotonic)
  std::int64_t expires_ns = 0;    ///< not renewed: when the lease ends at the latest (monotonic)
  std::int64_t acquired_ns = 0;   ///< when the first of the current holds was sent (monotonic)
  std::uint32_t generation = 0;   ///< bumps when the slot is released: stale replies are ignored
  bool renewal_queued = false;    ///< in a renewal batch the watchdog built and has not sent yet
  bool in_use = false;
};

/// A hold that is not renewed and whose lease has ended.
inline bool lapsed(const hold& h, std::int64_t now_ns) {
  return !h.watchdog && h.expires_ns != 0 && now_ns >= h.expires_ns;
}

/// How much of a lease the client does not count on (config::lease_margin, config::clock_drift_factor):
/// the server's clock may run faster than ours, by up to the drift factor.
struct lease_margin {
  std::int64_t fixed_ns = 0;
  double drift = 0;
  std::int64_t of(std::int64_t lease_ms) const {
    return fixed_ns + static_cast<std::int64_t>(static_cast<double>(lease_ms) * 1e6 * drift);
  }
};

/// The hold's deadline on the client (monotonic ns): the send time of the request that last confirmed
/// it (the acquire or a renewal) + its lease - the margin. The server cannot expire the hold before
/// its send time + lease by our clock, as long as the clocks' rates differ by less than the margin.
inline std::int64_t valid_until(const hold& h, const lease_margin& margin) {
  return h.confirmed_ns + h.lease_ms * 1'000'000 - margin.of(h.lease_ms);
}

/// Whether the client watches the hold's deadline: one its caller holds (an acquire whose outcome was
/// unknown is not), not lost yet, and with a lease (the watchdog's or a fixed one).
inline bool watched(const hold& h) { return h.in_use && !h.lost && h.count > 0 && h.lease_ms > 0; }

/// How long the client still counts on the hold, in whole milliseconds (rounded down): 0 when it is
/// not watched (not held by its caller, or lost) or its deadline has passed.
inline std::int64_t valid_for_ms(const hold& h, const lease_margin& margin, std::int64_t now_ns) {
  if (!watched(h)) return 0;
  const std::int64_t left = valid_until(h, margin) - now_ns;
  return left > 0 ? left / 1'000'000 : 0;
}

class hold_table {
 public:
  static constexpr std::uint32_t none = 0xffffffffu;

  explicit hold_table(std::size_t capacity);

  std::uint32_t find(std::string_view name, std::int64_t owner, hold_field field = hold_field::plain) const;
  /// Finds or inserts; none when the table is full.
  std::uint32_t find_or_insert(std::string_view name, std::int64_t owner, hold_field field = hold_field::plain);
  void release(std::uint32_t index);

  hold& operator[](std::uint32_t i) { return entries_[i]; }
  const hold& operator[](std::uint32_t i) const { return entries_[i]; }
  std::uint32_t capacity() const { return static_cast<std::uint32_t>(entries_.size()); }
  std::size_t size() const { return size_; }

 private:
  std::size_t bucket_of(std::string_view name, std::int64_t owner, hold_field field) const;

  std::vector<hold> entries_;
  std::vector<std::uint32_t> free_;
  std::vector<std::uint32_t> buckets_;  // open addressing, linear probing, backward-shift deletion
  std::size_t size_ = 0;
};

}  // namespace deadbolt::detail
