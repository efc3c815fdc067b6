// status's output: the text for people, the JSON for scripts.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "duration.hpp"
#include "json.hpp"
#include "lock_state.hpp"
#include "status_line.hpp"

namespace deadbolt::cli {
namespace {

// Names and commands come from other people: no control characters reach the terminal.
std::string shown(const std::string& s) { return fit(s, s.size()); }

std::string hex(const std::string& bytes) {
  static const char digits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out += digits[c >> 4];
    out += digits[c & 15];
  }
  return out;
}

std::string ttl_text(std::chrono::milliseconds ttl) {
  if (ttl.count() >= 0) return ", ttl " + format_duration(ttl);
  return ttl.count() == -1 ? ", no ttl" : "";
}

const holder_info* info_of(const lock_state& s, const std::string& holder) {
  const auto it = s.infos.find(holder);
  return it == s.infos.end() ? nullptr : &it->second;
}

void print_holders(const lock_state& s) {
  const deadbolt::object_info& o = s.object;
  for (const auto& p : o.permits) {
    std::printf("  permit %s", p.id.hex().c_str());
    if (!p.expires_ms) std::printf("  never expires");
    else if (*p.expires_ms <= wall_clock_ms()) std::printf("  expired");
    else std::printf("  expires in %s", format_duration(std::chrono::milliseconds(*p.expires_ms - wall_clock_ms())).c_str());
    if (const holder_info* info = info_of(s, p.id.hex())) std::printf("  (%s)", shown(describe(*info)).c_str());
    std::printf("\n");
  }
  for (const auto& h : o.holders) {
    std::printf("  holder %s  holds %lld", shown(h.owner).c_str(), static_cast<long long>(h.count));
    if (const holder_info* info = info_of(s, h.owner)) std::printf("  (%s)", shown(describe(*info)).c_str());
    std::printf("\n");
  }
}

void add_info(json& out, const holder_info* info) {
  if (!info) return;
  out.key("host").string(info->host);
  out.key("pid").string(info->pid);
  out.key("command").string(info->command);
  out.key("since_ms").number(info->since_ms);
}

}  // namespace

void print_text(const std::string& name, const lock_state& s) {
  const deadbolt::object_info& o = s.object;
  const std::string n = shown(name);
  const std::string value = o.value ? std::to_string(*o.value) : "0";
  switch (o.kind) {
    case deadbolt::object_kind::none:
      std::printf("%s: not locked\n", n.c_str());
      break;
    case deadbolt::object_kind::lock:
    case deadbolt::object_kind::fenced_lock:
    case deadbolt::object_kind::fair_lock:
    case deadbolt::object_kind::read_write_lock: {
      const char* what = o.kind == deadbolt::object_kind::read_write_lock ? "read/write lock"
                         : o.kind == deadbolt::object_kind::fair_lock     ? "fair lock"
                         : o.kind == deadbolt::object_kind::fenced_lock   ? "fenced lock"
                                                                          : "lock";
      const std::string queued = o.queue.empty() ? ""
                                 : ", " + std::to_string(o.queue.size()) + (o.queue.size() == 1 ? " waiter" : " waiters") + " queued";
      if (!o.locked()) {
        std::printf("%s: %s, not locked%s\n", n.c_str(), what, queued.c_str());
        if (!o.queue.empty()) {
          std::printf("  (only the first in line may take it: one that died blocks it until its place lapses;\n"
                      "   'deadbolt unlock --force' clears the queue)\n");
        }
        break;
      }
      std::printf("%s: %s, locked%s%s%s%s\n", n.c_str(), what, o.mode.empty() ? "" : " for ", o.mode.c_str(),
                  ttl_text(o.ttl).c_str(), queued.c_str());
      print_holders(s);
      break;
    }
    case deadbolt::object_kind::expirable_semaphore:
      std::printf("%s: permit-expirable semaphore, %s available, %zu acquired%s\n", n.c_str(), value.c_str(),
                  o.permit_count, ttl_text(o.ttl).c_str());
      print_holders(s);
      break;
    case deadbolt::object_kind::semaphore_or_latch:
      std::printf("%s: semaphore with %s permits available, or count-down latch at %s (the data does not say "
                  "which)%s\n",
                  n.c_str(), value.c_str(), value.c_str(), ttl_text(o.ttl).c_str());
      break;
    case deadbolt::object_kind::other:
      std::printf("%s: a %s, not a lock, semaphore or latch\n", n.c_str(), shown(o.redis_type).c_str());
      break;
  }
  // A fair lock's waiters, first in line first, with how long each keeps its place if it died.
  for (std::size_t i = 0; i < o.queue.size(); ++i) {
    const auto& q = o.queue[i];
    std::printf("  waiter %s  %s", shown(q.owner).c_str(), i == 0 ? "first, " : "");
    if (!q.deadline_ms) std::printf("no deadline (removed at the next acquire)\n");
    else if (*q.deadline_ms <= wall_clock_ms()) std::printf("its place has lapsed (removed at the next acquire)\n");
    else std::printf("its place lapses in %s\n", format_duration(std::chrono::milliseconds(*q.deadline_ms - wall_clock_ms())).c_str());
  }
  if (o.fencing_token) std::printf("  fencing token: %llu\n", static_cast<unsigned long long>(*o.fencing_token));
}

void print_json(const std::string& name, const lock_state& s) {
  json out;
  write_json(out, name, s);
  std::printf("%s\n", out.text().c_str());
}

void write_json(json& out, const std::string& name, const lock_state& s) {
  const deadbolt::object_info& o = s.object;
  const bool has_permits = o.kind == deadbolt::object_kind::expirable_semaphore;
  out.begin_object();
  out.key("name").string(name);
  if (!valid_utf8(name)) out.key("name_hex").string(hex(name));
  out.key("kind").string(deadbolt::to_string(o.kind));
  out.key("type").string(o.redis_type);
  out.key("locked").boolean(o.locked());
  out.key("mode");
  if (o.mode.empty()) out.null(); else out.string(o.mode);
  out.key("ttl_ms").number(static_cast<std::int64_t>(o.ttl.count()));
  out.key("holders").begin_array();
  for (const auto& h : o.holders) {
    out.begin_object();
    // "<36-char client uuid>:<owner id>[:write]"
    out.key("field").string(h.owner);
    out.key("client").string(h.owner.substr(0, 36));
    out.key("owner").string(h.owner.size() > 37 ? h.owner.substr(37) : "");
    out.key("count").number(h.count);
    add_info(out, info_of(s, h.owner));
    out.end_object();
  }
  out.end_array();
  if (has_permits) {
    out.key("permits").begin_array();
    for (const auto& p : o.permits) {
      out.begin_object();
      out.key("id").string(p.id.hex());
      out.key("expires_ms");
      if (p.expires_ms) out.number(*p.expires_ms); else out.null();
      add_info(out, info_of(s, p.id.hex()));
      out.end_object();
    }
    out.end_array();
  }
  out.key("queue").begin_array();
  for (const auto& q : o.queue) out.string(q.owner);
  out.end_array();
  // The same waiters with how long each still keeps its place (null: no deadline recorded).
  out.key("waiters").begin_array();
  for (const auto& q : o.queue) {
    out.begin_object();
    out.key("field").string(q.owner);
    out.key("lapses_in_ms");
    if (q.deadline_ms) out.number(std::max<std::int64_t>(*q.deadline_ms - wall_clock_ms(), 0)); else out.null();
    out.end_object();
  }
  out.end_array();
  out.key("fencing_token");
  if (o.fencing_token) out.number(static_cast<std::int64_t>(*o.fencing_token)); else out.null();
  if (o.value) out.key("value").string(std::to_string(*o.value));
  out.end_object();
}

void print_line(const std::string& name, const lock_state& s) {
  const deadbolt::object_info& o = s.object;
  std::string state;
  switch (o.kind) {
    case deadbolt::object_kind::expirable_semaphore:
      state = std::to_string(o.permit_count) + " acquired, " + (o.value ? std::to_string(*o.value) : "0") + " available";
      break;
    case deadbolt::object_kind::semaphore_or_latch:
      state = "value " + (o.value ? std::to_string(*o.value) : "0");
      break;
    default:
      state = o.locked() ? (o.mode.empty() ? "locked" : "locked for " + o.mode) : "free";
      if (!o.queue.empty()) state += ", " + std::to_string(o.queue.size()) + " queued";
  }
  std::string holder;
  if (!o.holders.empty()) {
    const holder_info* info = info_of(s, o.holders.front().owner);
    holder = info ? describe(*info) : o.holders.front().owner;
    if (o.holders.size() > 1) holder += " (+" + std::to_string(o.holders.size() - 1) + ")";
  } else if (!o.permits.empty()) {
    const holder_info* info = info_of(s, o.permits.front().id.hex());
    holder = info ? describe(*info) : "permit " + o.permits.front().id.hex();
    if (o.permits.size() > 1) holder += " (+" + std::to_string(o.permits.size() - 1) + ")";
  }
  const std::string ttl = o.ttl.count() >= 0 ? format_duration(o.ttl) : "-";
  char line[512];
  std::snprintf(line, sizeof line, "%-24s %-19s %-24s %-8s %s", shown(name).c_str(), deadbolt::to_string(o.kind),
                state.c_str(), ttl.c_str(), shown(holder).c_str());
  std::string text(line);
  while (!text.empty() && text.back() == ' ') text.pop_back();
  std::printf("%s\n", text.c_str());
}

}  // namespace deadbolt::cli
