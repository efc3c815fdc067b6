// A whole reply as a tree, for deadbolt::client::async_command (not used on the lock paths, which
// decode replies in place without allocating).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deadbolt/resp/type.hpp"

namespace deadbolt {

struct reply {
  resp::type type = resp::type::null;
  /// The value of a scalar kind (string, error text, number as text).
  std::string text;
  /// The elements of an aggregate; a map's as key, value, key, value, ...
  std::vector<reply> elements;

  bool is_null() const noexcept { return type == resp::type::null; }
  bool is_error() const noexcept { return resp::is_error(type); }
  /// The value as an integer, if it is one (an integer reply or a decimal string).
  std::optional<std::int64_t> as_int() const;
};

}  // namespace deadbolt
