#include "sentinel/sentinel_replies.hpp"

#include <charconv>
#include <cstdint>

#include "deadbolt/error.hpp"
#include "wire/address_source.hpp"

namespace deadbolt::detail {
namespace {

// A port as the sentinels write it: digits only, nothing after them; 0 when it is none (or 0).
std::uint16_t port_of(std::string_view text) noexcept {
  unsigned port = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, err] = std::from_chars(text.data(), end, port);
  return err == std::errc() && ptr == end && port <= 65535 ? static_cast<std::uint16_t>(port) : 0;
}

}  // namespace

void master_address_reader::reset() noexcept {
  error_ = false;
  unknown_ = false;
  parts_ = 0;
  found_ = server_address{};
}

void master_address_reader::take(const resp::node& n) {
  if (n.depth == 0) {
    error_ = resp::is_error(n.type);
    unknown_ = n.type == resp::type::null;
    return;
  }
  if (n.depth != 1) return;
  if (parts_ == 0) {
    found_.host.assign(n.value);
  } else if (parts_ == 1) {
    found_.port = port_of(n.value);
    if (found_.port == 0) error_ = true;
  }
  ++parts_;
}

std::error_code master_address_reader::finish(std::error_code ec) {
  if (!ec && (error_ || (!unknown_ && (parts_ != 2 || found_.host.empty())))) ec = errc::protocol_error;
  if (!ec && unknown_) ec = errc::unknown_master;
  if (!ec) found_.numeric = is_ip_literal(found_.host);
  return ec;
}

void sentinel_replicas_reader::reset() {
  replicas_.clear();
  key_.clear();
  pending_ = server_address{};
  down_ = false;
  field_ = 0;
}

void sentinel_replicas_reader::take(const resp::node& n) {
  if (n.depth == 1) {  // the next replica's fields follow
    keep_pending();
    field_ = 0;
    return;
  }
  if (n.depth != 2) return;
  if (field_++ % 2 == 0) {
    key_.assign(n.value);
    return;
  }
  if (key_ == "ip") {
    pending_.host.assign(n.value);
  } else if (key_ == "port") {
    pending_.port = port_of(n.value);
  } else if (key_ == "flags") {
    const std::string_view flags = n.value;
    // Not "disconnected": the promotion (REPLICAOF NO ONE with CLIENT KILL) cuts the sentinels'
    // links to the replica promoted, flagged so by every sentinel for 15-55 ms (measured, Redis
    // 7.0), the very moment a new connection to the old master must expect it.
    down_ = flags.find("s_down") != std::string_view::npos || flags.find("o_down") != std::string_view::npos;
  }
}

void sentinel_replicas_reader::finish(std::error_code ec) {
  if (ec) {
    replicas_.clear();
    return;
  }
  keep_pending();
}

void sentinel_replicas_reader::keep_pending() {
  if (!pending_.host.empty() && pending_.port != 0 && !down_ && replicas_.size() < most) {
    pending_.numeric = is_ip_literal(pending_.host);
    replicas_.push_back(pending_);
  }
  pending_ = server_address{};
  down_ = false;
}

bool read_master_switch(std::string_view payload, std::string_view master, master_switch_news& out) {
  std::string_view words[5];
  std::size_t count = 0;
  for (std::string_view rest = payload; !rest.empty() && count < 5; ++count) {
    const std::size_t space = rest.find(' ');
    words[count] = rest.substr(0, space);
    rest = space == std::string_view::npos ? std::string_view() : rest.substr(space + 1);
  }
  if (count != 5 || words[0] != master) return false;
  const std::uint16_t port = port_of(words[4]);
  if (port == 0) return false;
  out.from_host = words[1];
  out.from_port = words[2];
  out.to = server_address{};
  out.to.host.assign(words[3]);
  out.to.port = port;
  out.to.numeric = is_ip_literal(out.to.host);
  return true;
}

}  // namespace deadbolt::detail
