// The id of one permit of an expirable_semaphore.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace deadbolt {

/// One permit of an expirable_semaphore: 16 random bytes (stored raw in Redis), shown as 32 lowercase
/// hex characters, as Redisson does.
class permit_id {
 public:
  permit_id() = default;
  explicit permit_id(const std::array<unsigned char, 16>& bytes) : bytes_(bytes) {}
  /// Parses 32 hex characters (either case); empty if `hex` is not that.
  static std::optional<permit_id> from_hex(std::string_view hex);
  std::string hex() const;
  const std::array<unsigned char, 16>& bytes() const noexcept { return bytes_; }
  std::string_view raw() const noexcept {
    return {reinterpret_cast<const char*>(bytes_.data()), bytes_.size()};
  }
  friend bool operator==(const permit_id& a, const permit_id& b) { return a.bytes_ == b.bytes_; }
  friend bool operator!=(const permit_id& a, const permit_id& b) { return !(a == b); }

 private:
  std::array<unsigned char, 16> bytes_{};
};

}  // namespace deadbolt
