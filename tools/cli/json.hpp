// A minimal JSON writer for `status --json`.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace deadbolt::cli {

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
    for (unsigned char c : s) {
      switch (c) {
        case '"': out_ += "\\\""; break;
        case '\\': out_ += "\\\\"; break;
        case '\n': out_ += "\\n"; break;
        case '\r': out_ += "\\r"; break;
        case '\t': out_ += "\\t"; break;
        default:
          if (c < 0x20) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\u%04x", c);
            out_ += buf;
          } else {
            out_ += static_cast<char>(c);
          }
      }
    }
    out_ += '"';
  }

  std::string out_;
  bool first_ = true;
  bool after_key_ = false;
};

}  // namespace deadbolt::cli
