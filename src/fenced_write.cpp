// Fenced reads and writes of a resource kept in Redis (include/deadbolt/fenced_write.hpp): the command
// that runs lua/fenced_write.lua, and what its reply means.
#include "deadbolt/fenced_write.hpp"

#include <charconv>

#include "base/server_error.hpp"
#include "scripts.hpp"

namespace deadbolt {

std::string fence_key_of(std::string_view key) {
  // Redis Cluster's rule: the hash tag is between the first '{' and the next '}', if not empty.
  const auto open = key.find('{');
  const auto close = open == std::string_view::npos ? std::string_view::npos : key.find('}', open + 1);
  const bool tagged = close != std::string_view::npos && close > open + 1;
  std::string fence;
  fence.reserve(key.size() + 8);
  if (!tagged) fence += '{';
  fence += key;
  if (!tagged) fence += '}';
  fence += ":fence";
  return fence;
}

std::string fence_writer(std::string_view lock_client_id, std::int64_t owner) {
  std::string writer(lock_client_id);
  writer += ':';
  writer += std::to_string(owner);
  return writer;
}

namespace detail {

std::error_code fenced_command(std::string_view key, std::uint64_t token, const std::optional<std::string_view>& writer,
                               const std::optional<std::string_view>& value, std::vector<std::string>& out) {
  if (key.empty() || token == 0 || (writer && writer->empty())) return make_error_code(errc::invalid_argument);
  const auto& script = scripts::fenced_write;
  out = {"EVAL", std::string(script.body), "2", std::string(key), fence_key_of(key), value ? "set" : "get",
         std::to_string(token)};
  if (value) out.emplace_back(*value);
  if (writer) out.emplace_back(*writer);  // after the value: the arguments of an anonymous writer stay as they were
  return {};
}

namespace {
std::optional<std::uint64_t> token_of(const reply& r) {
  std::uint64_t n = 0;
  const char* end = r.text.data() + r.text.size();
  const auto [ptr, ec] = std::from_chars(r.text.data(), end, n);
  if (ec != std::errc() || ptr != end || r.text.empty()) return std::nullopt;
  return n;
}
}  // namespace

std::error_code read_fenced_reply(const reply& r, fenced_result& out) {
  if (r.is_error()) {
    out.error = r.text;
    return server_error_code(r.text);  // one place reads error replies (base/server_error)
  }
  // {1, newest, value?} accepted; {0, newest} refused.
  if (r.elements.size() < 2 || !r.elements[0].as_int()) return make_error_code(errc::protocol_error);
  const auto newest = token_of(r.elements[1]);
  if (!newest) return make_error_code(errc::protocol_error);
  out.accepted = *r.elements[0].as_int() == 1;
  out.newest_token = *newest;
  out.value.reset();
  if (out.accepted && r.elements.size() > 2 && !r.elements[2].is_null()) out.value = r.elements[2].text;
  return {};
}

}  // namespace detail
}  // namespace deadbolt
