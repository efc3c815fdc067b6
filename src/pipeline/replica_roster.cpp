#include "pipeline/replica_roster.hpp"

namespace deadbolt::detail {

replication_info parse_replication_info(std::string_view text) {
  replication_info info;
  info.answered = true;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    const std::size_t colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    const std::string_view key = line.substr(0, colon), value = line.substr(colon + 1);
    if (key == "role") info.master = value == "master";
    if (key == "master_replid") info.replid.assign(value);
    if (key == "master_replid2") info.replid2.assign(value);
  }
  return info;
}

bool promoted_from(const replication_info& other, const replication_info& ours) noexcept {
  return other.answered && ours.answered && other.master && !ours.replid.empty() && other.replid2 == ours.replid;
}

void replica_roster::clear() noexcept {
  for (member& m : members_) m.used = false;
  tracking_ = false;
  not_master_ = false;
  trusted_ = true;
}

replica_roster::member* replica_roster::find(std::string_view host, std::uint16_t port) noexcept {
  for (member& m : members_) {
    if (m.used && m.port == port && m.host == host) return &m;
  }
  return nullptr;
}

void replica_roster::expect(const std::vector<server_address>& replicas) {
  for (const server_address& r : replicas) {
    if (r.host.empty() || r.port == 0 || find(r.host, r.port) != nullptr) continue;
    for (member& free : members_) {
      if (free.used) continue;
      free.host.assign(r.host);
      free.port = r.port;
      // Expected after the server's listing was read (a cluster's layout comes after the seed's
      // login): that listing did not name it, so it is asked like one that left.
      free.state = tracking_ ? standing::left : standing::listed;
      free.asked_ns = 0;
      free.used = true;
      free.expected_only = true;
      break;
    }
  }
  judge();
}

void replica_roster::listed(const role_reader& role) {
  if (role.error()) return;
  if (!role.master()) {
    not_master_ = true;
    trusted_ = false;
    return;
  }
  not_master_ = false;
  tracking_ = true;
  std::array<bool, capacity> seen{};
  for (std::size_t i = 0; i < role.listed_count(); ++i) {
    const listed_replica& r = role.listed(i);
    if (r.port == 0 || r.host.empty()) continue;  // not an address: nothing to ask
    member* m = find(r.host, r.port);
    if (m == nullptr) {
      for (member& free : members_) {
        if (free.used) continue;
        free.host.assign(r.host);  // keeps the string's room when it is the same size or smaller
        free.port = r.port;
        free.used = true;
        free.expected_only = false;
        m = &free;
        break;
      }
      if (m == nullptr) continue;  // more replicas than the roster holds: this one is not followed
    }
    m->state = standing::listed;  // listed again: a replica of this master, whatever it was meanwhile
    m->expected_only = false;
    seen[static_cast<std::size_t>(m - members_.data())] = true;
  }
  for (std::size_t i = 0; i < capacity; ++i) {
    member& m = members_[i];
    if (m.used && !seen[i] && m.state == standing::listed) {
      m.state = standing::left;
      m.asked_ns = 0;
    }
  }
  judge();
}

void replica_roster::judge() noexcept {
  trusted_ = !not_master_;
  for (const member& m : members_) {
    if (m.used && m.state != standing::listed) trusted_ = false;
  }
}

const replica_roster::member* replica_roster::ask_due(std::int64_t now_ns) noexcept {
  for (member& m : members_) {
    if (!m.used) continue;
    if (m.state == standing::left || (m.state == standing::promoted && now_ns - m.asked_ns >= recheck_ns)) {
      m.state = standing::asking;
      m.asked_ns = now_ns;
      return &m;
    }
  }
  return nullptr;
}

void replica_roster::answered(std::string_view host, std::uint16_t port, bool master, std::int64_t now_ns) noexcept {
  member* m = find(host, port);
  if (m == nullptr || m->state != standing::asking) return;
  if (master) {
    m->state = standing::promoted;
    m->asked_ns = now_ns;
  } else {
    m->used = false;  // gone, or a replica of someone: it holds no writes this master's clients make
  }
  judge();
}

}  // namespace deadbolt::detail
