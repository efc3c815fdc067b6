// RESP2/RESP3 data types as they appear on the wire.
#pragma once

#include <cstdint>
#include <string_view>

namespace deadbolt::resp {

/// The kind of a decoded node. RESP2 nulls (`$-1`, `*-1`) decode as `null`.
enum class type : std::uint8_t {
  simple_string,    // +
  simple_error,     // -
  integer,          // :
  blob_string,      // $
  blob_error,       // !
  verbatim_string,  // =  (value excludes the 3-letter format and ':')
  double_type,      // ,  (value is the textual form, validated)
  big_number,       // (
  boolean,          // #  (value is "t" or "f")
  null,             // _  and RESP2 $-1 / *-1
  array,            // *
  map,              // %  (size counts pairs)
  set,              // ~
  attribute,        // |  (size counts pairs; precedes the value it annotates)
  push,             // >
};

/// True for the kinds whose node is followed by child nodes.
constexpr bool is_aggregate(type t) noexcept {
  return t == type::array || t == type::map || t == type::set || t == type::attribute ||
         t == type::push;
}

/// True for the two error kinds.
constexpr bool is_error(type t) noexcept {
  return t == type::simple_error || t == type::blob_error;
}

/// A short lowercase name, for messages and tests.
std::string_view to_string(type t) noexcept;

}  // namespace deadbolt::resp
