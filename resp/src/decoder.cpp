#include "deadbolt/resp/decoder.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

namespace deadbolt::resp {
namespace {

// Header lines of lengths, integers, doubles and booleans are short; a longer run without CRLF is
// garbage, not a reason to wait for more bytes.
constexpr std::size_t max_number_line = 64;

enum class line_status { complete, need_more, too_long, bad_terminator };

struct line {
  line_status status;
  std::string_view text;  // between the type byte and CR
  // complete: type byte + text + CRLF. too_long and bad_terminator: the longest prefix of the line
  // that still reads as need_more (a split input may have stopped there), which the reply size limit
  // is checked against so that the error does not depend on where the input was split.
  std::size_t size;
};

// Finds the CRLF that ends the line starting at input[0] (the type byte).
line find_line(std::string_view input, std::size_t max_text) noexcept {
  // At most max_text bytes of text, then the CR (written so that max_text + 1 cannot overflow).
  const std::size_t after_type = input.size() - 1;
  const std::size_t searchable = after_type <= max_text ? after_type : max_text + 1;
  const void* cr = std::memchr(input.data() + 1, '\r', searchable);
  if (cr == nullptr) {
    if (after_type > max_text) return {line_status::too_long, {}, max_text + 1};
    return {line_status::need_more, {}, 0};
  }
  const std::size_t text_len = static_cast<std::size_t>(static_cast<const char*>(cr) - input.data()) - 1;
  if (1 + text_len + 1 >= input.size()) return {line_status::need_more, {}, 0};
  if (input[1 + text_len + 1] != '\n') return {line_status::bad_terminator, {}, text_len + 2};
  return {line_status::complete, input.substr(1, text_len), text_len + 3};
}

bool parse_int64(std::string_view s, std::int64_t& out) noexcept {
  if (s.empty()) return false;
  bool negative = false;
  std::size_t i = 0;
  if (s[0] == '-' || s[0] == '+') {
    negative = s[0] == '-';
    i = 1;
    if (s.size() == 1) return false;
  }
  // Up to 18 digits cannot overflow: skip the per-digit bound check (a division) on this common path.
  if (s.size() - i <= 18) {
    std::int64_t value = 0;
    for (; i < s.size(); ++i) {
      const unsigned digit = static_cast<unsigned char>(s[i]) - '0';
      if (digit > 9) return false;
      value = value * 10 + static_cast<std::int64_t>(digit);
    }
    out = negative ? -value : value;
    return true;
  }
  // Accumulate as a negative number so that INT64_MIN is representable.
  std::int64_t value = 0;
  constexpr std::int64_t min = std::numeric_limits<std::int64_t>::min();
  for (; i < s.size(); ++i) {
    const unsigned digit = static_cast<unsigned char>(s[i]) - '0';
    if (digit > 9) return false;
    if (value < (min + static_cast<std::int64_t>(digit)) / 10) return false;
    value = value * 10 - static_cast<std::int64_t>(digit);
  }
  if (!negative) {
    if (value == min) return false;
    value = -value;
  }
  out = value;
  return true;
}

bool all_digits(std::string_view s) noexcept {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// RESP3 double: [sign] (inf | nan | digits [. digits] [(e|E) [sign] digits]).
bool valid_double(std::string_view s) noexcept {
  if (!s.empty() && (s[0] == '-' || s[0] == '+')) s.remove_prefix(1);
  if (s == "inf" || s == "nan") return true;
  std::size_t i = 0;
  auto digits = [&] {
    const std::size_t start = i;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
    return i - start;
  };
  if (digits() == 0) return false;
  if (i < s.size() && s[i] == '.') {
    ++i;
    if (digits() == 0) return false;
  }
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    ++i;
    if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
    if (digits() == 0) return false;
  }
  return i == s.size();
}

bool is_type_byte(char c) noexcept {
  switch (c) {
    case '+': case '-': case ':': case '$': case '*': case '_': case ',': case '#': case '(':
    case '!': case '=': case '%': case '~': case '|': case '>':
      return true;
    default:
      return false;
  }
}

bool is_blob_kind(char c) noexcept { return c == '$' || c == '!' || c == '='; }

type aggregate_type(char c) noexcept {
  switch (c) {
    case '*': return type::array;
    case '%': return type::map;
    case '~': return type::set;
    case '|': return type::attribute;
    default: return type::push;
  }
}

}  // namespace

decoder::decoder(const resp::limits& l) noexcept : limits_(l) {
  limits_.max_depth = std::min(limits_.max_depth, depth_capacity);
}

void decoder::reset() noexcept {
  depth_ = 0;
  reply_bytes_ = 0;
  failed_ = false;
}

parse_result decoder::fail(error e) noexcept {
  failed_ = true;
  parse_result r;
  r.what = parse_result::kind::error;
  r.error = e;
  return r;
}

parse_result decoder::emit(const node& n, std::size_t consumed) noexcept {
  parse_result r;
  r.what = parse_result::kind::node;
  r.node = n;
  r.consumed = consumed;
  reply_bytes_ += consumed;
  // A leaf (or empty aggregate) completes elements upward. An attribute annotates the value that
  // follows it, so finishing one does not count as an element of its parent.
  const bool empty_attribute = n.type == type::attribute;
  if (!empty_attribute) {
    bool done = true;
    while (depth_ > 0) {
      frame& top = stack_[depth_ - 1];
      if (--top.remaining > 0) {
        done = false;
        break;
      }
      --depth_;
      if (top.attribute) {
        done = false;
        break;
      }
    }
    if (done) {
      r.end_of_reply = true;
      reply_bytes_ = 0;
    }
  }
  return r;
}

parse_result decoder::aggregate(type t, std::int64_t declared, std::size_t consumed) noexcept {
  const bool pairs = t == type::map || t == type::attribute;
  const auto count = static_cast<std::uint64_t>(declared);
  if (count > limits_.max_elements || (pairs && count * 2 > limits_.max_elements)) {
    return fail(error::element_limit_exceeded);
  }
  node n{t, depth_, static_cast<std::size_t>(count), {}};
  if (count == 0) return emit(n, consumed);
  if (depth_ >= limits_.max_depth) return fail(error::depth_limit_exceeded);
  stack_[depth_++] = frame{static_cast<std::size_t>(pairs ? count * 2 : count), t == type::attribute};
  parse_result r;
  r.what = parse_result::kind::node;
  r.node = n;
  r.consumed = consumed;
  reply_bytes_ += consumed;
  return r;
}

parse_result decoder::next(std::string_view input) noexcept {
  if (failed_) return fail(error::decoder_failed);
  if (input.empty()) return {};
  const char kind = input[0];
  if (!is_type_byte(kind)) return fail(error::invalid_type_byte);

  const bool long_line = kind == '+' || kind == '-' || kind == '(';
  const std::size_t max_text = long_line ? limits_.max_bulk_length : max_number_line;
  const line l = find_line(input, max_text);
  switch (l.status) {
    case line_status::need_more:
      if (reply_bytes_ + input.size() > limits_.max_reply_size) return fail(error::reply_limit_exceeded);
      return {};
    case line_status::too_long:
    case line_status::bad_terminator:
      // Input that stopped short of the offending byte would have failed the reply size check
      // above: so must this input, or the error would depend on how the bytes were split.
      if (reply_bytes_ + l.size > limits_.max_reply_size) return fail(error::reply_limit_exceeded);
      if (l.status == line_status::bad_terminator) return fail(error::missing_crlf);
      return fail(long_line ? error::bulk_limit_exceeded : error::invalid_length);
    case line_status::complete:
      break;
  }
  if (reply_bytes_ + l.size > limits_.max_reply_size) return fail(error::reply_limit_exceeded);

  switch (kind) {
    case '+': return emit({type::simple_string, depth_, 1, l.text}, l.size);
    case '-': return emit({type::simple_error, depth_, 1, l.text}, l.size);
    case ':': {
      std::int64_t v;
      if (!parse_int64(l.text, v)) return fail(error::invalid_integer);
      return emit({type::integer, depth_, 1, l.text}, l.size);
    }
    case ',':
      if (!valid_double(l.text)) return fail(error::invalid_double);
      return emit({type::double_type, depth_, 1, l.text}, l.size);
    case '(': {
      std::string_view digits = l.text;
      if (!digits.empty() && (digits[0] == '-' || digits[0] == '+')) digits.remove_prefix(1);
      if (!all_digits(digits)) return fail(error::invalid_big_number);
      return emit({type::big_number, depth_, 1, l.text}, l.size);
    }
    case '#':
      if (l.text != "t" && l.text != "f") return fail(error::invalid_boolean);
      return emit({type::boolean, depth_, 1, l.text}, l.size);
    case '_':
      if (!l.text.empty()) return fail(error::invalid_null);
      return emit({type::null, depth_, 1, {}}, l.size);
    default:
      break;
  }

  const bool agg = !is_blob_kind(kind);
  if (l.text == "?") return fail(error::unsupported_streamed);
  std::int64_t declared;
  if (!parse_int64(l.text, declared) || declared < -1 || (l.text[0] == '+')) {
    return fail(error::invalid_length);
  }
  if (declared == -1) {
    // RESP2 null bulk string / null array.
    if (kind != '$' && kind != '*') return fail(error::invalid_length);
    return emit({type::null, depth_, 1, {}}, l.size);
  }
  if (agg) return aggregate(aggregate_type(kind), declared, l.size);

  const auto length = static_cast<std::uint64_t>(declared);
  if (length > limits_.max_bulk_length) return fail(error::bulk_limit_exceeded);
  // In 64 bits: with a 32-bit size_t and a huge max_bulk_length the sum could wrap. A total that
  // does not fit in size_t exceeds max_reply_size anyway.
  const std::uint64_t total64 = std::uint64_t{l.size} + length + 2;
  if (std::uint64_t{reply_bytes_} + total64 > limits_.max_reply_size) return fail(error::reply_limit_exceeded);
  const auto total = static_cast<std::size_t>(total64);
  if (input.size() < total) return {};
  if (input[total - 2] != '\r' || input[total - 1] != '\n') return fail(error::missing_crlf);
  std::string_view payload = input.substr(l.size, static_cast<std::size_t>(length));
  if (kind == '$') return emit({type::blob_string, depth_, 1, payload}, total);
  if (kind == '!') return emit({type::blob_error, depth_, 1, payload}, total);
  if (payload.size() < 4 || payload[3] != ':') return fail(error::invalid_verbatim);
  return emit({type::verbatim_string, depth_, 1, payload.substr(4)}, total);
}

}  // namespace deadbolt::resp
