// A minimal JSON writer for `status --json`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace deadbolt::cli {

/// The length of the well-formed UTF-8 sequence `s` starts with (RFC 3629: no overlong forms, no
/// surrogates, at most U+10FFFF), or 0 if it does not start with one.
inline std::size_t utf8_sequence_length(std::string_view s) {
  const auto byte = [&](std::size_t i) { return i < s.size() ? static_cast<unsigned char>(s[i]) : 0u; };
  const unsigned c = byte(0);
  const auto tail = [&](std::size_t i) { return (byte(i) & 0xC0u) == 0x80u; };
  if (c < 0x80) return s.empty() ? 0 : 1;
  if (c >= 0xC2 && c <= 0xDF) return tail(1) ? 2 : 0;
  if (c >= 0xE0 && c <= 0xEF) {
    const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && tail(2) ? 3 : 0;
  }
  if (c >= 0xF0 && c <= 0xF4) {
    const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
    return byte(1) >= lo && byte(1) <= hi && tail(2) && tail(3) ? 4 : 0;
  }
  return 0;
}

inline bool valid_utf8(std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const std::size_t n = utf8_sequence_length(s.substr(i));
    if (n == 0) return false;
    i += n;
  }
  return true;
}

/// A minimal JSON writer. Strings are written as valid JSON whatever their bytes: a byte that is not
/// part of well-formed UTF-8 becomes U+FFFD (callers add the raw bytes in hex where they matter).
class json {
 public:
  json& begin_object() { return open('{'); }
  json& end_object() { return close('}'); }
  json& begin_array() { return open('['); }
  json& end_array() { return close(']'); }
  json& key(std::string_view k) {
    separate();
    quote(k);
    out_ += ':';
    after_key_ = true;
    return *this;
  }
  json& string(std::string_view s) { return value([&] { quote(s); }); }
  json& number(std::int64_t n) { return value([&] { out_ += std::to_string(n); }); }
  json& boolean(bool b) { return value([&] { out_ += b ? "true" : "false"; }); }
  json& null() { return value([&] { out_ += "null"; }); }
  const std::string& text() const { return out_; }

 private:
  template <typename F>
  json& value(F write) {
    separate();
    write();
    return *this;
  }
  json& open(char c) {
    separate();
    out_ += c;
    first_ = true;
    return *this;
  }
  json& close(char c) {
    out_ += c;
    first_ = false;
    return *this;
  }
  void separate() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (!first_) out_ += ',';
    first_ = false;
  }
  void quote(std::string_view s) {
    out_ += '"';
    for (std::size_t i = 0; i < s.size();) {
      const auto c = static_cast<unsigned char>(s[i]);
      if (c >= 0x80) {  // a valid UTF-8 sequence as it is; any other byte as U+FFFD
        const std::size_t n = utf8_sequence_length(s.substr(i));
        if (n == 0) {
          out_ += "\\ufffd";
          ++i;
        } else {
          out_.append(s.substr(i, n));
          i += n;
        }
        continue;
      }
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20 || c == 0x7F) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
      ++i;
    }
    out_ += '"';
  }

  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace deadbolt::cli
