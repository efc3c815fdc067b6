#include "deadbolt/resp/type.hpp"

namespace deadbolt::resp {

std::string_view to_string(type t) noexcept {
  switch (t) {
    case type::simple_string: return "simple_string";
    case type::simple_error: return "simple_error";
    case type::integer: return "integer";
    case type::blob_string: return "blob_string";
    case type::blob_error: return "blob_error";
    case type::verbatim_string: return "verbatim_string";
    case type::double_type: return "double";
    case type::big_number: return "big_number";
    case type::boolean: return "boolean";
    case type::null: return "null";
    case type::array: return "array";
    case type::map: return "map";
    case type::set: return "set";
    case type::attribute: return "attribute";
    case type::push: return "push";
  }
  return "unknown";
}

}  // namespace deadbolt::resp
