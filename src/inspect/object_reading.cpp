#include "inspect/object_reading.hpp"

#include <array>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string_view>

#include "base/keys.hpp"
#include "base/server_error.hpp"
#include "deadbolt/error.hpp"
#include "pipeline/script_call.hpp"

namespace deadbolt::detail {
namespace {

// The script's reply: {type, pttl, data, queue, deadlines, token, permits, truncated, permit count}.
enum part : std::size_t { type_part, ttl_part, data_part, queue_part, deadlines_part, token_part, permits_part,
                          truncated_part, permit_count_part, parts };

bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

bool is_integer(std::string_view s) {
  std::int64_t ignored = 0;
  return parse_int(s, ignored);
}

// "<uuid>:<thread id>", or with ":write" appended.
bool is_owner_field(std::string_view field) {
  if (field.size() < 38 || field[36] != ':' || !is_uuid(field.substr(0, 36))) return false;
  std::string_view thread = field.substr(37);
  constexpr std::string_view write = ":write";
  if (thread.size() > write.size() && thread.substr(thread.size() - write.size()) == write) {
    thread.remove_suffix(write.size());
  }
  return is_integer(thread);
}

// A ZSET score as whole milliseconds (Lua hands scores over as text, e.g. "1712345678901").
std::optional<std::int64_t> score_ms(const std::string& text) {
  std::int64_t whole = 0;
  if (parse_int(text, whole)) return whole;
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || *end != '\0' || !std::isfinite(v) || std::fabs(v) > 9.0e18) return std::nullopt;
  return static_cast<std::int64_t>(std::llround(v));
}

// A permit's ZSET member: its id's 16 raw bytes (Redisson before 3.17: the id's hex text).
std::optional<permit_id> permit_of(const std::string& member) {
  if (member.size() == 16) {
    std::array<unsigned char, 16> bytes{};
    for (std::size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<unsigned char>(member[i]);
    return permit_id(bytes);
  }
  return permit_id::from_hex(member);
}

bool is_array(const reply& r) {
  return r.type == resp::type::array || r.type == resp::type::set || r.type == resp::type::push;
}

// Reads a hash's fields into `out`; false (with out.foreign_field set) if one is not a lock's.
bool read_lock_hash(const reply& data, object_info& out) {
  for (std::size_t i = 0; i + 1 < data.elements.size(); i += 2) {
    const std::string& field = data.elements[i].text;
    const std::string& value = data.elements[i + 1].text;
    if (field == "mode" && (value == "read" || value == "write")) {
      out.mode = value;
      continue;
    }
    std::int64_t count = 0;
    if (!is_owner_field(field) || !parse_int(value, count)) {
      out.foreign_field = field;
      out.mode.clear();
      out.holders.clear();
      return false;
    }
    out.holders.push_back({field, count});
  }
  return true;
}

void read_queue(const reply& queue, const reply& deadlines, object_info& out) {
  for (const auto& waiter : queue.elements) {
    queued_waiter w;
    w.owner = waiter.text;
    for (std::size_t i = 0; i + 1 < deadlines.elements.size(); i += 2) {
      if (deadlines.elements[i].text == w.owner) w.deadline_ms = score_ms(deadlines.elements[i + 1].text);
    }
    out.queue.push_back(std::move(w));
  }
}

void read_permits(const reply& permits, object_info& out) {
  for (std::size_t i = 0; i + 1 < permits.elements.size(); i += 2) {
    const auto id = permit_of(permits.elements[i].text);
    if (!id) continue;  // not a permit id: nothing a semaphore wrote
    acquired_permit p;
    p.id = *id;
    const auto expiry = score_ms(permits.elements[i + 1].text);
    if (expiry && *expiry != never_expires) p.expires_ms = expiry;
    out.permits.push_back(p);
  }
}

// The kind, from what was found (a fair queue or a token outlives the lock hash: a free lock).
object_kind lock_kind_of(const object_info& info, bool deadlines) {
  if (!info.mode.empty()) return object_kind::read_write_lock;
  if (!info.queue.empty() || deadlines) return object_kind::fair_lock;
  if (info.fencing_token) return object_kind::fenced_lock;
  return object_kind::lock;
}

}  // namespace

std::error_code read_object(const reply& r, object_info& out) {
  out = object_info{};
  if (r.is_error()) return server_error_code(r.text);
  if (!is_array(r) || r.elements.size() != parts) return errc::protocol_error;
  const reply& data = r.elements[data_part];
  const reply& queue = r.elements[queue_part];
  const reply& deadlines = r.elements[deadlines_part];
  const reply& permits = r.elements[permits_part];
  const auto ttl = r.elements[ttl_part].as_int();
  if (!ttl || !is_array(data) || !is_array(queue) || !is_array(deadlines) || !is_array(permits)) {
    return errc::protocol_error;
  }
  out.redis_type = r.elements[type_part].text;
  out.ttl = std::chrono::milliseconds(*ttl);
  out.truncated = r.elements[truncated_part].as_int().value_or(0) != 0;
  std::int64_t token = 0;
  if (!r.elements[token_part].is_null() && parse_int(r.elements[token_part].text, token) && token >= 0) {
    out.fencing_token = static_cast<std::uint64_t>(token);
  }
  read_queue(queue, deadlines, out);
  read_permits(permits, out);
  const bool has_deadlines = !deadlines.elements.empty();

  if (out.redis_type == "hash") {
    out.kind = read_lock_hash(data, out) ? lock_kind_of(out, has_deadlines) : object_kind::other;
  } else if (out.redis_type == "string") {
    std::int64_t value = 0;
    if (data.elements.size() == 1 && parse_int(data.elements[0].text, value)) {
      out.value = value;
      out.kind = out.permits.empty() ? object_kind::semaphore_or_latch : object_kind::expirable_semaphore;
    } else {
      out.kind = object_kind::other;
    }
  } else if (out.redis_type == "none") {
    // No key: a free lock whose queue or token remains, a semaphore whose every permit is taken and
    // whose count key is gone, or nothing.
    if (!out.permits.empty()) out.kind = object_kind::expirable_semaphore;
    else if (!out.queue.empty() || out.fencing_token) out.kind = lock_kind_of(out, false);
    else out.kind = object_kind::none;
  } else {
    out.kind = object_kind::other;
  }
  if (out.kind != object_kind::fair_lock) out.queue.clear();
  if (out.kind == object_kind::expirable_semaphore) {
    const auto count = r.elements[permit_count_part].as_int().value_or(0);
    out.permit_count = count > 0 ? static_cast<std::size_t>(count) : 0;
  } else {
    out.permits.clear();
  }
  return {};
}

}  // namespace deadbolt::detail
