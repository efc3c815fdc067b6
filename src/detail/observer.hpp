// The engine's side of config::log and config::metrics (deadbolt/observability.hpp). Every call site
// is one line that costs one predictable branch when its hook is unset:
//   if (metrics_hook* m = observe.metrics()) m->on_renewal(n);
//   observe.log(log_level::warning, "connection to ", where, " lost: ", ec);
// A log line is only formatted when the hook is set and the level reaches config::log_threshold, into
// a fixed buffer (long lines are cut).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string_view>
#include <system_error>
#include <type_traits>

#include "deadbolt/config.hpp"
#include "deadbolt/observability.hpp"

namespace deadbolt::detail {

/// One piece of a log line: text, a number or an error code (its message).
class log_part {
 public:
  log_part(std::string_view text) : kind_(kind::text), text_(text) {}
  log_part(const char* text) : kind_(kind::text), text_(text) {}
  template <typename Int, typename = std::enable_if_t<std::is_integral_v<Int>>>
  log_part(Int n) : kind_(kind::number), number_(static_cast<std::int64_t>(n)) {}
  log_part(const std::error_code& ec) : kind_(kind::error), error_(&ec) {}

  /// Appends this part to [out, end); returns the new end of the text.
  char* write(char* out, char* end) const;

 private:
  enum class kind { text, number, error } kind_;
  std::string_view text_;
  std::int64_t number_ = 0;
  const std::error_code* error_ = nullptr;
};

class observer {
 public:
  explicit observer(const config& cfg)
      : metrics_(cfg.metrics), log_(cfg.log), threshold_(cfg.log_threshold) {}

  /// The metrics hook, or null.
  metrics_hook* metrics() const noexcept { return metrics_.get(); }

  template <typename... Parts>
  void log(log_level level, const Parts&... parts) const {
    if (log_ && level >= threshold_) write(level, {log_part(parts)...});
  }

 private:
  void write(log_level level, std::initializer_list<log_part> parts) const;

  std::shared_ptr<metrics_hook> metrics_;
  log_hook log_;
  log_level threshold_;
};

}  // namespace deadbolt::detail
