#include "history.hpp"

#include <unistd.h>

#include <cerrno>
#include <cstdio>

namespace verify {
namespace {

void append_quoted(std::string& out, std::string_view text) {
  out += '"';
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  out += '"';
}

}  // namespace

event::event(std::string_view process, std::string_view type, std::string_view f, std::int64_t time) : time_(time) {
  line_ = "{\"time\": " + std::to_string(time);
  with("process", process).with("type", type).with("f", f);
}

event& event::with(std::string_view key, std::string_view value) {
  line_ += ", ";
  append_quoted(line_, key);
  line_ += ": ";
  append_quoted(line_, value);
  return *this;
}

event& event::with(std::string_view key, std::int64_t value) {
  line_ += ", ";
  append_quoted(line_, key);
  line_ += ": " + std::to_string(value);
  return *this;
}

void event::emit() {
  const std::string out = line_ + "}\n";
  std::size_t done = 0;
  while (done < out.size()) {  // a pipe takes lines this short whole; a signal may interrupt
    const ssize_t n = ::write(1, out.data() + done, out.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;  // the harness has gone: nothing to record to
    done += static_cast<std::size_t>(n);
  }
}

}  // namespace verify
