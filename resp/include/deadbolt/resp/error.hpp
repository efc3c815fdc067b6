// Errors reported by the RESP decoder, as std::error_code.
#pragma once

#include <system_error>

namespace deadbolt::resp {

/// Every way input can be malformed or exceed a limit. A decoder that reports one stays failed until
/// reset(): the stream's framing is lost and the connection should be dropped.
enum class error {
  ok = 0,
  invalid_type_byte = 1,   ///< a node starts with a byte that is no RESP type
  invalid_length,          ///< a length header is not a decimal integer >= -1
  invalid_integer,         ///< an integer reply is malformed or overflows 64 bits
  invalid_double,          ///< a double reply is malformed
  invalid_boolean,         ///< a boolean reply is neither t nor f
  invalid_big_number,      ///< a big number reply has a non-digit
  invalid_null,            ///< a null reply carries data
  invalid_verbatim,        ///< a verbatim string lacks its "fmt:" prefix
  missing_crlf,            ///< a line or payload is not terminated by CRLF
  unsupported_streamed,    ///< streamed strings/aggregates ("$?", "*?") are not supported
  depth_limit_exceeded,    ///< aggregates nest deeper than limits::max_depth
  element_limit_exceeded,  ///< an aggregate declares more than limits::max_elements
  bulk_limit_exceeded,     ///< a bulk payload or line is longer than limits::max_bulk_length
  reply_limit_exceeded,    ///< a reply spans more than limits::max_reply_size bytes
  decoder_failed,          ///< next() called again after an error without reset()
};

const std::error_category& resp_category() noexcept;

inline std::error_code make_error_code(error e) noexcept {
  return {static_cast<int>(e), resp_category()};
}

}  // namespace deadbolt::resp

template <>
struct std::is_error_code_enum<deadbolt::resp::error> : std::true_type {};
