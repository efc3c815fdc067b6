#include "cluster/slot_map.hpp"

#include <algorithm>
#include <string>

#include "base/key_slot.hpp"
#include "cluster/redirect.hpp"
#include "deadbolt/error.hpp"
#include "wire/address_source.hpp"

namespace deadbolt::detail {
namespace {

bool is_aggregate(const reply& r) {
  return r.type == resp::type::array || r.type == resp::type::map || r.type == resp::type::set;
}

// A field of a map reply (RESP3 map, or RESP2's flat key, value, ... array), or null.
const reply* field(const reply& map, std::string_view name) {
  if (!is_aggregate(map)) return nullptr;
  for (std::size_t i = 0; i + 1 < map.elements.size(); i += 2) {
    if (map.elements[i].text == name) return &map.elements[i + 1];
  }
  return nullptr;
}

bool slot_number(const reply& r, std::uint16_t& out) {
  const auto v = r.as_int();
  if (!v || *v < 0 || *v >= cluster_slot_count) return false;
  out = static_cast<std::uint16_t>(*v);
  return true;
}

// "" means the host the reply came from; "?" an endpoint the node does not know (unusable).
bool make_address(std::string_view host, std::int64_t port, std::string_view replying_host, server_address& out) {
  if (host == "?" || port <= 0 || port > 65535) return false;
  if (host.empty()) host = replying_host;
  if (host.empty()) return false;
  out = server_address{};
  out.host.assign(host);
  out.port = static_cast<std::uint16_t>(port);
  out.numeric = is_ip_literal(host);
  return true;
}

bool failed(const reply* health) { return health && (health->text == "fail" || health->text == "failed"); }

void add_replica(std::vector<server_address>& replicas, server_address where) {
  if (std::find(replicas.begin(), replicas.end(), where) == replicas.end()) replicas.push_back(std::move(where));
}

}  // namespace

std::error_code parse_cluster_shards(const reply& r, std::string_view replying_host, std::vector<shard_owner>& out) {
  out.clear();
  if (r.type != resp::type::array) return errc::protocol_error;
  for (const reply& shard : r.elements) {
    const reply* slots = field(shard, "slots");
    const reply* nodes = field(shard, "nodes");
    if (!slots || !nodes || slots->type != resp::type::array || !is_aggregate(*nodes)) return errc::protocol_error;
    if (slots->elements.size() % 2 != 0) return errc::protocol_error;
    if (slots->elements.empty()) continue;
    shard_owner owner;
    for (std::size_t i = 0; i < slots->elements.size(); i += 2) {
      std::uint16_t first = 0, last = 0;
      if (!slot_number(slots->elements[i], first) || !slot_number(slots->elements[i + 1], last) || first > last) {
        return errc::protocol_error;
      }
      owner.ranges.emplace_back(first, last);
    }
    bool found = false;
    for (const reply& node : nodes->elements) {
      const reply* role = field(node, "role");
      if (!role || failed(field(node, "health"))) continue;
      const bool master = role->text == "master";
      if (master && found) continue;
      // A master by the address clients use; a replica by the one its master's ROLE lists.
      const reply* endpoint = field(node, master ? "endpoint" : "ip");
      if (!endpoint) endpoint = field(node, master ? "ip" : "endpoint");
      const reply* port = field(node, "port");
      if (!endpoint || !port || !port->as_int()) {
        if (master) return errc::protocol_error;
        continue;  // no address to ask it at: nothing to expect of it
      }
      server_address where;
      if (!make_address(endpoint->text, *port->as_int(), replying_host, where)) continue;
      if (master) {
        owner.master = std::move(where);
        found = true;
      } else {
        add_replica(owner.replicas, std::move(where));
      }
    }
    if (!found) continue;
    out.push_back(std::move(owner));
  }
  return {};
}

std::error_code parse_cluster_slots(const reply& r, std::string_view replying_host, std::vector<shard_owner>& out) {
  out.clear();
  if (r.type != resp::type::array) return errc::protocol_error;
  for (const reply& range : r.elements) {
    // [first, last, [host, port, id, ...], replicas...]
    if (range.type != resp::type::array || range.elements.size() < 3) return errc::protocol_error;
    std::uint16_t first = 0, last = 0;
    if (!slot_number(range.elements[0], first) || !slot_number(range.elements[1], last) || first > last) {
      return errc::protocol_error;
    }
    const reply& master = range.elements[2];
    if (master.type != resp::type::array || master.elements.size() < 2 || !master.elements[1].as_int()) {
      return errc::protocol_error;
    }
    server_address where;
    if (!make_address(master.elements[0].text, *master.elements[1].as_int(), replying_host, where)) continue;
    auto same = std::find_if(out.begin(), out.end(), [&](const shard_owner& s) { return s.master == where; });
    if (same == out.end()) {
      out.push_back(shard_owner{std::move(where), {}, {}});
      same = out.end() - 1;
    }
    same->ranges.emplace_back(first, last);
    for (std::size_t i = 3; i < range.elements.size(); ++i) {  // the replicas: [host, port, id, ...] each
      const reply& replica = range.elements[i];
      if (replica.type != resp::type::array || replica.elements.size() < 2 || !replica.elements[1].as_int()) {
        return errc::protocol_error;
      }
      if (make_address(replica.elements[0].text, *replica.elements[1].as_int(), replying_host, where)) {
        add_replica(same->replicas, std::move(where));
      }
    }
  }
  return {};
}

void slot_table::assign(std::uint16_t first, std::uint16_t last, std::uint16_t node) noexcept {
  if (last >= cluster_slot_count) last = cluster_slot_count - 1;
  for (std::uint32_t s = first; s <= last; ++s) owner_[s] = node;
}

bool slot_table::complete() const noexcept {
  return std::none_of(owner_.begin(), owner_.end(), [](std::uint16_t n) { return n == no_node; });
}

bool slot_table::serves_any(std::uint16_t node) const noexcept {
  return std::any_of(owner_.begin(), owner_.end(), [node](std::uint16_t n) { return n == node; });
}

std::string describe_layout(const std::vector<shard_owner>& shards) {
  std::vector<const shard_owner*> order;
  for (const auto& s : shards) {
    if (!s.ranges.empty()) order.push_back(&s);
  }
  std::sort(order.begin(), order.end(),
            [](const shard_owner* a, const shard_owner* b) { return a->ranges.front().first < b->ranges.front().first; });
  std::string out;
  for (const shard_owner* s : order) {
    if (!out.empty()) out += ", ";
    out += s->master.host + ':' + std::to_string(s->master.port);
    out += " slots ";
    for (std::size_t i = 0; i < s->ranges.size() && i < 3; ++i) {
      if (i > 0) out += ',';
      out += std::to_string(s->ranges[i].first);
      if (s->ranges[i].second != s->ranges[i].first) out += '-' + std::to_string(s->ranges[i].second);
    }
    if (s->ranges.size() > 3) out += " and " + std::to_string(s->ranges.size() - 3) + " more ranges";
  }
  return out;
}

}  // namespace deadbolt::detail
