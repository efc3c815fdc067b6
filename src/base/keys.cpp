#include "base/keys.hpp"

namespace deadbolt {

std::string prefix_name(std::string_view prefix, std::string_view name) {
  std::string out(prefix);
  if (name.find('{') != std::string_view::npos) {
    out.append(":").append(name);
  } else {
    out.append(":{").append(name).append("}");
  }
  return out;
}

std::string suffix_name(std::string_view name, std::string_view suffix) {
  std::string out;
  if (name.find('{') != std::string_view::npos) {
    out.append(name).append(":");
  } else {
    out.append("{").append(name).append("}:");
  }
  return out.append(suffix);
}

}  // namespace deadbolt
