#include "holder_info.hpp"

#include <unistd.h>

#include <charconv>
#include <chrono>

#include "deadbolt/key_names.hpp"
#include "duration.hpp"

namespace deadbolt::cli {
namespace {

constexpr std::size_t longest_command = 200;

// One line per field: newlines in a value become spaces.
void add_field(std::string& out, std::string_view name, std::string_view value) {
  out += name;
  out += '=';
  for (char c : value) out += c == '\n' || c == '\r' ? ' ' : c;
  out += '\n';
}

}  // namespace

std::string holder_info_key(std::string_view name, std::string_view holder) {
  return deadbolt::prefix_name("deadbolt_holder", name) + ":" + std::string(holder);
}

std::string encode_holder_info(const std::vector<std::string>& command) {
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  std::string joined;
  for (const auto& word : command) {
    if (!joined.empty()) joined += ' ';
    joined += word;
  }
  if (joined.size() > longest_command) joined = joined.substr(0, longest_command - 3) + "...";
  std::string out;
  add_field(out, "host", host);
  add_field(out, "pid", std::to_string(::getpid()));
  add_field(out, "since", std::to_string(wall_clock_ms()));
  add_field(out, "command", joined);
  return out;
}

std::optional<holder_info> decode_holder_info(std::string_view text) {
  holder_info info;
  bool any = false;
  while (!text.empty()) {
    const auto end = text.find('\n');
    const std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    const auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, eq), value = line.substr(eq + 1);
    if (key == "host") info.host = value;
    else if (key == "pid") info.pid = value;
    else if (key == "command") info.command = value;
    else if (key == "since") std::from_chars(value.data(), value.data() + value.size(), info.since_ms);
    else continue;
    any = true;
  }
  if (!any) return std::nullopt;
  return info;
}

std::string describe(const holder_info& info) {
  std::string out = "pid " + (info.pid.empty() ? std::string("?") : info.pid);
  if (!info.host.empty()) out += " on " + info.host;
  if (info.since_ms > 0) {
    const std::int64_t held = wall_clock_ms() - info.since_ms;
    if (held >= 0) out += ", for " + format_duration(std::chrono::milliseconds(held));
  }
  if (!info.command.empty()) out += ": " + info.command;
  return out;
}

}  // namespace deadbolt::cli
