// RESP command encoder: commands as arrays of bulk strings, appended to a reusable buffer.
#pragma once

#include <charconv>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <type_traits>

namespace deadbolt::resp {

/// Appends RESP to `out`. Reusing one string (clear() keeps its capacity) makes steady-state encoding
/// allocation-free; integers are formatted on the stack.
class encoder {
 public:
  explicit encoder(std::string& out) noexcept : out_(out) {}

  /// Starts a command of `count` arguments: `*<count>\r\n`.
  encoder& array(std::size_t count) { return header('*', static_cast<std::uint64_t>(count)); }

  /// One argument as a bulk string: `$<len>\r\n<bytes>\r\n`.
  encoder& bulk(std::string_view s) {
    header('$', s.size());
    out_.append(s.data(), s.size());
    out_.append("\r\n", 2);
    return *this;
  }

  /// One argument made of several pieces, without building it first: `$<total>\r\n<a><b>...\r\n`.
  encoder& bulk_concat(std::initializer_list<std::string_view> parts) {
    std::size_t total = 0;
    for (auto p : parts) total += p.size();
    header('$', total);
    for (auto p : parts) out_.append(p.data(), p.size());
    out_.append("\r\n", 2);
    return *this;
  }

  /// One integer argument, as decimal text in a bulk string (what Redis expects for numbers).
  template <typename Int, std::enable_if_t<std::is_integral_v<Int> && !std::is_same_v<Int, bool>, int> = 0>
  encoder& bulk(Int value) {
    char digits[24];
    auto r = std::to_chars(digits, digits + sizeof digits, value);
    return bulk(std::string_view(digits, static_cast<std::size_t>(r.ptr - digits)));
  }

  /// A whole command: every argument is a string-like or an integer.
  template <typename... Args>
  encoder& command(const Args&... args) {
    array(sizeof...(Args));
    (bulk(args), ...);
    return *this;
  }

 private:
  encoder& header(char type, std::uint64_t n) {
    char buf[24];
    buf[0] = type;
    auto r = std::to_chars(buf + 1, buf + sizeof buf - 2, n);
    r.ptr[0] = '\r';
    r.ptr[1] = '\n';
    out_.append(buf, static_cast<std::size_t>(r.ptr + 2 - buf));
    return *this;
  }

  std::string& out_;
};

}  // namespace deadbolt::resp
