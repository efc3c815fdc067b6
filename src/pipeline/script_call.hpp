// Encoding helpers shared by the operations: EVALSHA (or EVAL after NOSCRIPT) headers, owner fields,
// integer replies.
#pragma once

#include <charconv>
#include <cstdint>
#include <string_view>

#include "deadbolt/resp/encoder.hpp"
#include "pipeline/request.hpp"
#include "pipeline/script.hpp"

namespace deadbolt::detail {

/// Writes "EVALSHA <sha> <nkeys>" (or "EVAL <body> <nkeys>" once the server said NOSCRIPT); the caller
/// then writes the keys and arguments. Marks `r` as running a script (for the NOSCRIPT fallback).
inline void begin_script(resp::encoder& e, request& r, const script& s, std::size_t keys, std::size_t args) {
  r.runs_script = true;
  e.array(3 + keys + args);
  if (r.send_script_body()) {
    e.bulk("EVAL").bulk(s.body);
  } else {
    e.bulk("EVALSHA").bulk(s.sha1);
  }
  e.bulk(keys);
}

/// An integer formatted once, kept for encoding.
class decimal {
 public:
  decimal() = default;
  explicit decimal(std::int64_t v) { set(v); }
  void set(std::int64_t v) {
    auto r = std::to_chars(digits_, digits_ + sizeof digits_, v);
    size_ = static_cast<std::size_t>(r.ptr - digits_);
  }
  std::string_view view() const { return {digits_, size_}; }

 private:
  char digits_[24] = {};
  std::size_t size_ = 0;
};

inline bool parse_int(std::string_view s, std::int64_t& out) {
  auto r = std::from_chars(s.data(), s.data() + s.size(), out);
  return r.ec == std::errc() && r.ptr == s.data() + s.size();
}

/// Collects a reply that is nil, an integer (or a decimal string), or an error.
struct scalar_reply {
  enum class kind { none, nil, integer, error, unexpected } what = kind::none;
  std::int64_t value = 0;
  std::error_code error;

  void reset() { what = kind::none; value = 0; error.clear(); }
  void take(const resp::node& n);
};

}  // namespace deadbolt::detail
