#include "deadbolt/observability.hpp"

namespace deadbolt {

const char* to_string(log_level level) noexcept {
  switch (level) {
    case log_level::debug: return "debug";
    case log_level::info: return "info";
    case log_level::warning: return "warning";
    case log_level::error: return "error";
  }
  return "unknown";
}

const char* to_string(connection_role role) noexcept {
  return role == connection_role::command ? "command" : "subscriber";
}

const char* to_string(table_kind table) noexcept {
  switch (table) {
    case table_kind::waiters: return "waiters";
    case table_kind::channels: return "channels";
    case table_kind::held_locks: return "held_locks";
  }
  return "unknown";
}

}  // namespace deadbolt
