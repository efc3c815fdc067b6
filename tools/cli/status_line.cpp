#include "status_line.hpp"

#include <sys/ioctl.h>
#include <unistd.h>

#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "duration.hpp"

namespace deadbolt::cli {

std::size_t terminal_width() {
  winsize size{};
  if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 && size.ws_col > 0) return size.ws_col;
  if (const char* columns = std::getenv("COLUMNS"); columns != nullptr) {
    std::size_t n = 0;
    const auto end = columns + std::strlen(columns);
    const auto r = std::from_chars(columns, end, n);
    if (r.ec == std::errc() && r.ptr == end && n > 0) return n;
  }
  return 80;
}

std::string fit(const std::string& text, std::size_t columns) {
  std::string out;
  std::size_t shown = 0, cut_at = 0, cut_shown = 0;  // where "..." would go if the text is too long
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const bool starts_character = (c & 0xC0) != 0x80;
    if (starts_character) {
      if (shown + 3 <= columns) {
        cut_at = out.size();
        cut_shown = shown;
      }
      if (shown == columns) {  // one more does not fit
        out.resize(cut_at);
        out.append(columns - cut_shown >= 3 ? "..." : std::string(columns - cut_shown, '.'));
        return out;
      }
      ++shown;
    }
    out += c < 0x20 || c == 0x7F ? '?' : static_cast<char>(c);
  }
  return out;
}

void status_line::show(const std::string& name, const std::string& holder, long long ttl_ms,
                       std::chrono::steady_clock::duration waited) {
  const auto waited_ms = std::chrono::duration_cast<std::chrono::milliseconds>(waited);
  std::string line = "deadbolt: waited " + format_duration(waited_ms) + " for " + name;
  if (ttl_ms >= 0) line += ", ttl " + format_duration(std::chrono::milliseconds(ttl_ms));
  if (!holder.empty()) line += ", held by " + holder;
  // One column short of the width: writing the last column makes some terminals wrap at once.
  const std::size_t width = terminal_width();
  line = fit(line, width > 1 ? width - 1 : 1);
  std::fprintf(stderr, "\r\033[K%s", line.c_str());
  std::fflush(stderr);
  shown_ = true;
}

void status_line::clear() {
  if (!shown_) return;
  std::fprintf(stderr, "\r\033[K");
  std::fflush(stderr);
  shown_ = false;
}

}  // namespace deadbolt::cli
