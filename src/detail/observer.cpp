#include "detail/observer.hpp"

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
  log_(level, std::string_view(line, static_cast<std::size_t>(out - line)));
}

}  // namespace deadbolt::detail
