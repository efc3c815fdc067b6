#include "pipeline/replica_roster.hpp"

namespace deadbolt::detail {

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
        m = &free;
        break;
      }
      if (m == nullptr) continue;  // more replicas than the roster holds: this one is not followed
    }
    m->state = standing::listed;  // listed again: a replica of this master, whatever it was meanwhile
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
