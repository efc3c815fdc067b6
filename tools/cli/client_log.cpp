#include "client_log.hpp"

#include "verbose_log.hpp"

namespace deadbolt::cli {
namespace {

std::string words_line;    // the last line with server words in it
std::string words;         // those words
std::string failure;       // the last connection failure's reason

bool is_code_char(char c) { return (c >= 'A' && c <= 'Z') || c == '_'; }

void take(deadbolt::log_level level, std::string_view message) {
  const std::string line(message);
  if (verbose_enabled()) verbose("%s", line.c_str());
  if (level < deadbolt::log_level::warning) return;
  if (std::string w = server_words_in(line); !w.empty()) {
    words_line = line;
    words = std::move(w);
  }
  for (const char* marker : {": failed: ", ": lost: "}) {
    const auto at = line.find(marker);
    if (at != std::string::npos) failure = line.substr(at + std::char_traits<char>::length(marker));
  }
}

}  // namespace

void attach_client_log(deadbolt::config& cfg) {
  cfg.log = take;
  cfg.log_threshold = deadbolt::log_level::info;
}

std::string server_words_in(const std::string& line) {
  for (std::size_t at = line.find(": "); at != std::string::npos; at = line.find(": ", at + 1)) {
    const std::size_t start = at + 2;
    std::size_t end = start;
    while (end < line.size() && is_code_char(line[end])) ++end;
    if (end - start >= 2 && (end == line.size() || line[end] == ' ')) return line.substr(start);
  }
  return {};
}

std::string server_words_for(std::error_code ec) {
  if (words.empty()) return {};
  // The line says what the words meant ("...: permission denied by the server's ACL: NOPERM ..."),
  // or that the login was refused: words left by another, earlier error are not this one's.
  const bool same = words_line.find(ec.message()) != std::string::npos ||
                    words_line.find(": login refused at ") != std::string::npos;
  return same ? words : std::string();
}

std::string last_connection_failure() { return failure; }

}  // namespace deadbolt::cli
