// The engine's side of config::log and config::metrics (deadbolt/observability.hpp). Every call site
// is one line that costs one predictable branch when its hook is unset:
//   if (const metrics_calls* m = observe.metrics()) m->on_renewal(n);
//   observe.log(log_level::warning, "connection to ", where, " lost: ", ec);
// A log line is only formatted when the hook is set and the level reaches config::log_threshold, into
// a fixed buffer (long lines are cut).
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
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

class observer;

/// The metrics hook as the engine calls it: the hook's calls, each contained (see observer::contain).
class metrics_calls {
 public:
  void on_acquire(const acquire_sample& s) const;
  void on_release(std::string_view name, std::chrono::nanoseconds held) const;
  void on_renewal(std::size_t holds) const;
  void on_renewal_failure(std::size_t holds, std::error_code error) const;
  void on_lease_lost(std::string_view name) const;
  void on_reconnect(connection_role role) const;
  void on_disconnect(connection_role role, std::error_code error) const;
  void on_table_use(table_kind table, std::size_t used, std::size_t capacity) const;
  void on_table_full(table_kind table) const;

 protected:
  explicit metrics_calls(const config& cfg) : hook_(cfg.metrics) {}
  std::shared_ptr<metrics_hook> hook_;

 private:
  const observer& self() const;
};

class observer : public metrics_calls {
 public:
  explicit observer(const config& cfg) : metrics_calls(cfg), log_(cfg.log), threshold_(cfg.log_threshold) {}

  /// The metrics hook (its calls contained), or null.
  const metrics_calls* metrics() const noexcept { return hook_ ? this : nullptr; }

  /// Whether a line at `level` reaches the log hook: for a line whose parts cost work to make.
  bool logs(log_level level) const noexcept { return log_ && level >= threshold_; }

  template <typename... Parts>
  void log(log_level level, const Parts&... parts) const {
    if (log_ && level >= threshold_) write(level, {log_part(parts)...});
  }

  /// Calls `user_code()`: the user's code (a hook, the lease-lost handler), called in the middle of the
  /// engine's work. An exception it throws stops here and is logged (error, "<what> threw: ..."): it
  /// never unwinds through the engine, where it would leave a count or a read loop broken halfway. A
  /// build without exceptions just calls.
  template <typename UserCode>
  void contain(const char* what, UserCode&& user_code) const {
#if defined(__cpp_exceptions)
    try {
      user_code();
    } catch (const std::exception& e) {
      threw(what, e.what());
    } catch (...) {
      threw(what, "an exception that is no std::exception");
    }
#else
    (void)what;
    user_code();
#endif
  }

 private:
  void write(log_level level, std::initializer_list<log_part> parts) const;
  void threw(const char* what, const char* message) const;

  log_hook log_;
  log_level threshold_;
};

}  // namespace deadbolt::detail
