#include "deadbolt/resp/error.hpp"

#include <string>

namespace deadbolt::resp {
namespace {

class category final : public std::error_category {
 public:
  const char* name() const noexcept override { return "deadbolt.resp"; }

  std::string message(int code) const override {
    switch (static_cast<error>(code)) {
      case error::ok: return "success";
      case error::invalid_type_byte: return "malformed reply: a node starts with a byte that is no RESP type";
      case error::invalid_length: return "malformed reply: invalid length header";
      case error::invalid_integer: return "malformed reply: invalid or out-of-range integer";
      case error::invalid_double: return "malformed reply: invalid double";
      case error::invalid_boolean: return "malformed reply: boolean is neither t nor f";
      case error::invalid_big_number: return "malformed reply: invalid big number";
      case error::invalid_null: return "malformed reply: null carries data";
      case error::invalid_verbatim: return "malformed reply: verbatim string without format prefix";
      case error::missing_crlf: return "malformed reply: missing CRLF terminator";
      case error::unsupported_streamed: return "unsupported reply: streamed string or aggregate";
      case error::depth_limit_exceeded: return "reply nests deeper than the configured limit";
      case error::element_limit_exceeded: return "reply aggregate has more elements than the configured limit";
      case error::bulk_limit_exceeded: return "reply string is longer than the configured limit";
      case error::reply_limit_exceeded: return "reply is larger than the configured limit";
      case error::decoder_failed: return "decoder used after an error without reset";
    }
    return "unknown RESP decoder error";
  }
};

}  // namespace

const std::error_category& resp_category() noexcept {
  static const category instance;
  return instance;
}

}  // namespace deadbolt::resp
