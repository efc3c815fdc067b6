#include "engine/holds.hpp"

#include <functional>

namespace deadbolt::detail {

hold_table::hold_table(std::size_t capacity) : entries_(capacity) {
  std::size_t buckets = 16;
  while (buckets < capacity * 2) buckets *= 2;
  buckets_.assign(buckets, none);
  free_.reserve(capacity);
  for (std::size_t i = capacity; i-- > 0;) free_.push_back(static_cast<std::uint32_t>(i));
  for (auto& e : entries_) e.name.reserve(48);
}

std::size_t hold_table::bucket_of(std::string_view name, std::int64_t owner, hold_field field) const {
  const std::size_t h = std::hash<std::string_view>()(name) ^
                        ((static_cast<std::size_t>(owner) * 4 + static_cast<std::size_t>(field)) * 0x9e3779b97f4a7c15ull);
  return h & (buckets_.size() - 1);
}

std::uint32_t hold_table::find(std::string_view name, std::int64_t owner, hold_field field) const {
  for (std::size_t b = bucket_of(name, owner, field);; b = (b + 1) & (buckets_.size() - 1)) {
    const std::uint32_t i = buckets_[b];
    if (i == none) return none;
    if (entries_[i].owner == owner && entries_[i].field == field && entries_[i].name == name) return i;
  }
}

std::uint32_t hold_table::find_or_insert(std::string_view name, std::int64_t owner, hold_field field) {
  std::size_t b = bucket_of(name, owner, field);
  for (;; b = (b + 1) & (buckets_.size() - 1)) {
    const std::uint32_t i = buckets_[b];
    if (i == none) break;
    if (entries_[i].owner == owner && entries_[i].field == field && entries_[i].name == name) return i;
  }
  if (free_.empty()) return none;
  const std::uint32_t i = free_.back();
  free_.pop_back();
  hold& h = entries_[i];
  h.name.assign(name);
  h.owner = owner;
  h.field = field;
  h.count = 0;
  h.server = 0;
  h.lease_ms = 0;
  h.watchdog = false;
  h.lost = false;
  h.uncertain = false;
  h.confirmed_ns = 0;
  h.expires_ns = 0;
  h.renewal_queued = false;
  h.in_use = true;
  buckets_[b] = i;
  ++size_;
  return i;
}

void hold_table::release(std::uint32_t index) {
  hold& h = entries_[index];
  if (!h.in_use) return;
  const std::size_t mask = buckets_.size() - 1;
  std::size_t b = bucket_of(h.name, h.owner, h.field);
  while (buckets_[b] != index) b = (b + 1) & mask;
  // Backward-shift deletion keeps every probe chain unbroken without tombstones.
  std::size_t hole = b;
  for (std::size_t next = (hole + 1) & mask; buckets_[next] != none; next = (next + 1) & mask) {
    const hold& moved = entries_[buckets_[next]];
    const std::size_t home = bucket_of(moved.name, moved.owner, moved.field);
    // Move it into the hole if its home is not in the cyclic range (hole, next].
    const bool in_range = hole <= next ? (home > hole && home <= next) : (home > hole || home <= next);
    if (!in_range) {
      buckets_[hole] = buckets_[next];
      hole = next;
    }
  }
  buckets_[hole] = none;
  h.in_use = false;
  ++h.generation;
  free_.push_back(index);
  --size_;
}

}  // namespace deadbolt::detail
