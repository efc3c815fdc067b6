// status's output: the text for people, the JSON for scripts.
#include <chrono>
#include <cstdio>

#include "duration.hpp"
#include "json.hpp"
#include "lock_state.hpp"
#include "status_line.hpp"

namespace deadbolt::cli {
namespace {

std::int64_t now_ms() {
  using namespace std::chrono;
  return duration_cast<milliseconds>(system_clock::now().time_since_epoch()).count();
}

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

std::string ttl_text(long long ttl_ms) {
  if (ttl_ms >= 0) return ", ttl " + format_duration(std::chrono::milliseconds(ttl_ms));
  return ttl_ms == -1 ? ", no ttl" : "";
}

void print_holders(const lock_state& s) {
  for (const auto& h : s.holders) {
    if (s.has_permits) {
      std::printf("  permit %s", h.field.c_str());
      if (!h.expires_ms) std::printf("  never expires");
      else if (*h.expires_ms <= now_ms()) std::printf("  expired");
      else std::printf("  expires in %s", format_duration(std::chrono::milliseconds(*h.expires_ms - now_ms())).c_str());
    } else {
      std::printf("  holder %s  holds %lld", shown(h.field).c_str(), static_cast<long long>(h.count));
    }
    if (h.info) std::printf("  (%s)", shown(describe(*h.info)).c_str());
    std::printf("\n");
  }
}

}  // namespace

std::string kind_of(const lock_state& s) {
  if (s.type == "hash") {
    if (!s.mode.empty()) return "read_write_lock";
    if (!s.queue.empty()) return "fair_lock";
    return s.token ? "fenced_lock" : "lock";
  }
  if (s.type == "string") return s.has_permits ? "expirable_semaphore" : "semaphore_or_latch";
  if (s.type == "none") {
    if (!s.queue.empty()) return "fair_lock";
    if (s.token) return "fenced_lock";
    return "none";
  }
  return "other";
}

void print_text(const std::string& name, const lock_state& s) {
  const std::string kind = kind_of(s), n = shown(name);
  if (kind == "none") {
    std::printf("%s: not locked\n", n.c_str());
  } else if (s.type == "none") {
    std::printf("%s: %s, not locked\n", n.c_str(), kind == "fair_lock" ? "fair lock" : "fenced lock");
  } else if (s.type == "hash") {
    const char* what = kind == "read_write_lock" ? "read/write lock"
                       : kind == "fair_lock"     ? "fair lock"
                       : kind == "fenced_lock"   ? "fenced lock"
                                                 : "lock";
    std::printf("%s: %s, locked%s%s%s\n", n.c_str(), what, s.mode.empty() ? "" : " for ", s.mode.c_str(),
                ttl_text(s.ttl_ms).c_str());
    print_holders(s);
  } else if (kind == "expirable_semaphore") {
    std::printf("%s: permit-expirable semaphore, %s available, %zu acquired%s\n", n.c_str(), shown(s.value).c_str(),
                s.holders.size(), ttl_text(s.ttl_ms).c_str());
    print_holders(s);
  } else if (kind == "semaphore_or_latch") {
    std::printf("%s: semaphore with %s permits available, or count-down latch at %s (the data does not say "
                "which)%s\n",
                n.c_str(), shown(s.value).c_str(), shown(s.value).c_str(), ttl_text(s.ttl_ms).c_str());
  } else {
    std::printf("%s: a %s, not a lock, semaphore or latch\n", n.c_str(), s.type.c_str());
  }
  if (!s.queue.empty()) {
    std::printf("  queue:");
    for (const auto& q : s.queue) std::printf(" %s", shown(q).c_str());
    std::printf("\n");
  }
  if (s.token) std::printf("  fencing token: %lld\n", static_cast<long long>(*s.token));
}

void print_json(const std::string& name, const lock_state& s) {
  json out;
  out.begin_object();
  out.key("name").string(name);
  if (!valid_utf8(name)) out.key("name_hex").string(hex(name));
  out.key("kind").string(kind_of(s));
  out.key("type").string(s.type);
  out.key("locked").boolean(s.type == "hash");
  out.key("mode");
  if (s.mode.empty()) out.null(); else out.string(s.mode);
  out.key("ttl_ms").number(s.ttl_ms);
  out.key(s.has_permits ? "permits" : "holders").begin_array();
  for (const auto& h : s.holders) {
    out.begin_object();
    if (s.has_permits) {
      out.key("id").string(h.field);
      out.key("expires_ms");
      if (h.expires_ms) out.number(*h.expires_ms); else out.null();
    } else {
      // "<36-char client uuid>:<owner id>[:write]"
      out.key("field").string(h.field);
      out.key("client").string(h.field.substr(0, 36));
      out.key("owner").string(h.field.size() > 37 ? h.field.substr(37) : "");
      out.key("count").number(h.count);
    }
    if (h.info) {
      out.key("host").string(h.info->host);
      out.key("pid").string(h.info->pid);
      out.key("command").string(h.info->command);
      out.key("since_ms").number(h.info->since_ms);
    }
    out.end_object();
  }
  out.end_array();
  if (s.has_permits) out.key("holders").begin_array().end_array();
  out.key("queue").begin_array();
  for (const auto& q : s.queue) out.string(q);
  out.end_array();
  out.key("fencing_token");
  if (s.token) out.number(*s.token); else out.null();
  if (s.type == "string") out.key("value").string(s.value);
  out.end_object();
  std::printf("%s\n", out.text().c_str());
}

}  // namespace deadbolt::cli
