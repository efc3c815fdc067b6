#include "cluster/redirect.hpp"

#include <charconv>
#include <string>

#include "base/host_port.hpp"
#include "base/key_slot.hpp"
#include "base/server_error.hpp"
#include "wire/address_source.hpp"

namespace deadbolt::detail {
namespace {

std::optional<std::uint32_t> parse_number(std::string_view text, std::uint32_t max) {
  std::uint32_t value = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || value > max) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

std::optional<server_address> parse_host_port(std::string_view text) {
  const host_port hp = split_host_port<host_port_grammar::cluster_reply>(text);
  if (hp.problem != host_port_problem::none) return std::nullopt;
  server_address where;
  where.host.assign(hp.host);
  where.port = hp.port;
  where.numeric = !hp.host.empty() && is_ip_literal(hp.host);
  return where;
}

std::optional<redirect> parse_redirect(std::string_view error_text, std::string_view replying_host) {
  redirect r;
  switch (server_error_kind_of(error_text)) {
    case server_error_kind::moved: r.what = redirect::kind::moved; break;
    case server_error_kind::ask: r.what = redirect::kind::ask; break;
    default: return std::nullopt;
  }
  const auto after_code = error_text.find(' ');
  if (after_code == std::string_view::npos) return std::nullopt;
  error_text.remove_prefix(after_code + 1);
  const auto space = error_text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto slot = parse_number(error_text.substr(0, space), cluster_slot_count - 1);
  auto target = parse_host_port(error_text.substr(space + 1));
  if (!slot || !target) return std::nullopt;
  if (target->host.empty()) {
    target->host.assign(replying_host);
    target->numeric = is_ip_literal(replying_host);
  }
  r.slot = static_cast<std::uint16_t>(*slot);
  r.target = std::move(*target);
  return r;
}

}  // namespace deadbolt::detail
