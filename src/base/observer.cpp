#include "base/observer.hpp"

#include <algorithm>
#include <charconv>
#include <string>

namespace deadbolt::detail {
namespace {

char* append(char* out, char* end, std::string_view text) {
  const std::size_t n = std::min(text.size(), static_cast<std::size_t>(end - out));
  return std::copy_n(text.data(), n, out);
}

}  // namespace

char* log_part::write(char* out, char* end) const {
  switch (kind_) {
    case kind::text: return append(out, end, text_);
    case kind::number: {
      char digits[24];
      const auto r = std::to_chars(digits, digits + sizeof digits, number_);
      return append(out, end, std::string_view(digits, static_cast<std::size_t>(r.ptr - digits)));
    }
    case kind::error: return append(out, end, error_->message());
  }
  return out;
}

void observer::write(log_level level, std::initializer_list<log_part> parts) const {
  char line[512];
  char* out = line;
  for (const log_part& p : parts) out = p.write(out, line + sizeof line);
  const std::string_view message(line, static_cast<std::size_t>(out - line));
#if defined(__cpp_exceptions)
  try {
    log_(level, message);
  } catch (...) {
    // A throwing log hook has nowhere to report to: the line is lost, the engine's work goes on.
  }
#else
  log_(level, message);
#endif
}

void observer::threw(const char* what, const char* message) const {
  log(log_level::error, what, " threw: ", message);
}

// ---- metrics_calls ---------------------------------------------------------------------------

const observer& metrics_calls::self() const { return static_cast<const observer&>(*this); }

void metrics_calls::on_acquire(const acquire_sample& s) const {
  self().contain("metrics hook on_acquire", [&] { hook_->on_acquire(s); });
}
void metrics_calls::on_release(std::string_view name, std::chrono::nanoseconds held) const {
  self().contain("metrics hook on_release", [&] { hook_->on_release(name, held); });
}
void metrics_calls::on_renewal(std::size_t holds) const {
  self().contain("metrics hook on_renewal", [&] { hook_->on_renewal(holds); });
}
void metrics_calls::on_renewal_failure(std::size_t holds, std::error_code error) const {
  self().contain("metrics hook on_renewal_failure", [&] { hook_->on_renewal_failure(holds, error); });
}
void metrics_calls::on_lease_lost(std::string_view name) const {
  self().contain("metrics hook on_lease_lost", [&] { hook_->on_lease_lost(name); });
}
void metrics_calls::on_reconnect(connection_role role) const {
  self().contain("metrics hook on_reconnect", [&] { hook_->on_reconnect(role); });
}
void metrics_calls::on_disconnect(connection_role role, std::error_code error) const {
  self().contain("metrics hook on_disconnect", [&] { hook_->on_disconnect(role, error); });
}
void metrics_calls::on_table_use(table_kind table, std::size_t used, std::size_t capacity) const {
  self().contain("metrics hook on_table_use", [&] { hook_->on_table_use(table, used, capacity); });
}
void metrics_calls::on_table_full(table_kind table) const {
  self().contain("metrics hook on_table_full", [&] { hook_->on_table_full(table); });
}

}  // namespace deadbolt::detail
