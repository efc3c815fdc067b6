// libFuzzer target for the sans-I/O RESP decoder.
//
// Input layout: [mode] [seed] [limits byte] RESP bytes...
//   mode bits 0-2  how the RESP bytes are split into the pieces a connection would receive
//   mode bits 3-5  which deadbolt::resp::limits to decode under (default, small, tiny, zero, derived,
//                  deeper than the stack, SIZE_MAX)
//   seed           drives the random split patterns and the read buffer's spare capacity
//   limits byte    the derived limits profile
//
// The RESP bytes are decoded twice: whole (the fuzzer's exact-sized buffer, so ASan catches any read
// past the end) and split (appended piece by piece to a read_buffer whose bytes outside unread() are
// poisoned, decoding every node available and dropping `consumed` bytes, as a connection does). Both
// runs must produce the same nodes and the same error, and every result must keep the decoder's
// contract; a violation calls __builtin_trap().
#include <sanitizer/asan_interface.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/read_buffer.hpp"

namespace {

using namespace deadbolt::resp;

#define FUZZ_CHECK(cond)        \
  do {                          \
    if (!(cond)) __builtin_trap(); \
  } while (0)

struct recorded {
  type t;
  std::size_t depth;
  std::size_t size;
  std::string_view value;  // into the fuzzer's input: stays valid for the whole run
  bool end_of_reply;
};

struct outcome {
  std::vector<recorded> nodes;
  std::error_code error;
  std::size_t consumed = 0;  // total bytes dropped
};

char type_byte(type t) {
  switch (t) {
    case type::simple_string: return '+';
    case type::simple_error: return '-';
    case type::integer: return ':';
    case type::blob_string: return '$';
    case type::blob_error: return '!';
    case type::verbatim_string: return '=';
    case type::double_type: return ',';
    case type::big_number: return '(';
    case type::boolean: return '#';
    case type::null: return '_';
    case type::array: return '*';
    case type::map: return '%';
    case type::set: return '~';
    case type::attribute: return '|';
    case type::push: return '>';
  }
  __builtin_trap();
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// A length or count header: decimal digits (leading zeros allowed), at most `max`. The decoder also
// takes a negative zero ("-0", "-00"), which is harmless.
std::size_t parse_count(std::string_view text, std::size_t max) {
  FUZZ_CHECK(!text.empty());
  const bool negative = text[0] == '-';
  if (negative) text.remove_prefix(1);
  FUZZ_CHECK(!text.empty());
  std::size_t n = 0;
  for (char c : text) {
    FUZZ_CHECK(is_digit(c));
    n = n * 10 + static_cast<std::size_t>(c - '0');
    FUZZ_CHECK(n <= max);
  }
  FUZZ_CHECK(!negative || n == 0);
  return n;
}

// An independent model of the reply structure: which depth the next node must have, and whether a
// node ends the reply. Also counts the bytes of the current reply against max_reply_size.
class reply_model {
 public:
  explicit reply_model(const limits& l) : limits_(l) {}

  void on_node(const parse_result& r) {
    const node& n = r.node;
    FUZZ_CHECK(n.depth == stack_.size());
    FUZZ_CHECK(n.depth <= limits_.max_depth);
    FUZZ_CHECK(n.depth <= decoder::depth_capacity);
    reply_bytes_ += r.consumed;
    FUZZ_CHECK(reply_bytes_ <= limits_.max_reply_size);

    bool ends = false;
    if (is_aggregate(n.type) && n.size > 0) {
      const bool pairs = n.type == type::map || n.type == type::attribute;
      stack_.push_back({pairs ? n.size * 2 : n.size, n.type == type::attribute});
      FUZZ_CHECK(stack_.size() <= limits_.max_depth);
    } else if (n.type != type::attribute) {
      // A complete value: it fills one slot of its parent, possibly completing ancestors. A
      // completed attribute does not fill a slot: the value it annotates follows.
      ends = true;
      while (!stack_.empty()) {
        frame& top = stack_.back();
        if (--top.remaining > 0) {
          ends = false;
          break;
        }
        const bool attribute = top.attribute;
        stack_.pop_back();
        if (attribute) {
          ends = false;
          break;
        }
      }
    }
    FUZZ_CHECK(r.end_of_reply == ends);
    if (ends) reply_bytes_ = 0;
  }

  bool in_reply() const { return !stack_.empty() || reply_bytes_ > 0; }

 private:
  struct frame {
    std::size_t remaining;
    bool attribute;
  };
  limits limits_;
  std::vector<frame> stack_;
  std::size_t reply_bytes_ = 0;
};

// Checks one node against the bytes it was decoded from.
void check_node(const parse_result& r, std::string_view input, const limits& l) {
  FUZZ_CHECK(r.what == parse_result::kind::node);
  FUZZ_CHECK(!r.error);
  FUZZ_CHECK(r.consumed > 0);
  FUZZ_CHECK(r.consumed <= input.size());
  FUZZ_CHECK(r.consumed >= 3);  // the shortest node is "_\r\n" / "+\r\n"
  const node& n = r.node;
  const std::string_view bytes = input.substr(0, r.consumed);
  FUZZ_CHECK(bytes[bytes.size() - 2] == '\r' && bytes[bytes.size() - 1] == '\n');

  // The value lies inside this node's own bytes (between the type byte and the final CRLF).
  if (!n.value.empty()) {
    FUZZ_CHECK(n.value.data() >= bytes.data() + 1);
    FUZZ_CHECK(n.value.data() + n.value.size() <= bytes.data() + bytes.size() - 2);
  }
  FUZZ_CHECK(n.value.size() <= l.max_bulk_length || n.type == type::integer ||
             n.type == type::double_type || n.type == type::boolean);

  const char first = bytes[0];
  if (n.type == type::null) {
    FUZZ_CHECK(first == '_' || first == '$' || first == '*');
    FUZZ_CHECK(n.value.empty());
    FUZZ_CHECK(n.size == 1);
    if (first == '_') {
      FUZZ_CHECK(bytes == "_\r\n");
    } else {
      // "$-1" / "*-1"; the decoder takes leading zeros ("-01") as it does in any length.
      std::string_view header = bytes.substr(1, bytes.size() - 3);
      FUZZ_CHECK(header.size() >= 2 && header[0] == '-' && header.back() == '1');
      header.remove_prefix(1);
      header.remove_suffix(1);
      for (char c : header) FUZZ_CHECK(c == '0');
    }
    return;
  }
  FUZZ_CHECK(first == type_byte(n.type));

  if (is_aggregate(n.type)) {
    FUZZ_CHECK(n.value.empty());
    const bool pairs = n.type == type::map || n.type == type::attribute;
    FUZZ_CHECK(n.size <= l.max_elements);
    FUZZ_CHECK(!pairs || n.size * 2 <= l.max_elements);
    // The header is exactly the decimal count.
    FUZZ_CHECK(parse_count(bytes.substr(1, bytes.size() - 3), l.max_elements) == n.size);
    return;
  }

  FUZZ_CHECK(n.size == 1);
  switch (n.type) {
    case type::simple_string:
    case type::simple_error:
    case type::integer:
    case type::double_type:
    case type::big_number:
    case type::boolean:
      // A line: the value is all of it.
      FUZZ_CHECK(n.value.size() == bytes.size() - 3);
      FUZZ_CHECK(n.value.empty() || n.value.data() == bytes.data() + 1);
      FUZZ_CHECK(n.value.find('\r') == std::string_view::npos);
      break;
    case type::blob_string:
    case type::blob_error:
    case type::verbatim_string: {
      // $<len>\r\n<payload>\r\n, where the verbatim value skips "fmt:".
      const std::size_t header_end = bytes.find("\r\n");
      FUZZ_CHECK(header_end != std::string_view::npos && header_end >= 2);
      const std::size_t len = parse_count(bytes.substr(1, header_end - 1), l.max_bulk_length);
      FUZZ_CHECK(header_end + 2 + len + 2 == bytes.size());
      const std::size_t skip = n.type == type::verbatim_string ? 4 : 0;
      FUZZ_CHECK(len >= skip);
      if (skip) FUZZ_CHECK(bytes[header_end + 2 + 3] == ':');
      FUZZ_CHECK(n.value.size() == len - skip);
      FUZZ_CHECK(n.value.empty() || n.value.data() == bytes.data() + header_end + 2 + skip);
      break;
    }
    default:
      __builtin_trap();
  }
  switch (n.type) {
    case type::boolean:
      FUZZ_CHECK(n.value == "t" || n.value == "f");
      break;
    case type::integer: {
      std::string_view v = n.value;
      FUZZ_CHECK(!v.empty());
      if (v[0] == '-' || v[0] == '+') v.remove_prefix(1);
      FUZZ_CHECK(!v.empty());
      for (char c : v) FUZZ_CHECK(is_digit(c));
      break;
    }
    case type::big_number: {
      std::string_view v = n.value;
      if (!v.empty() && (v[0] == '-' || v[0] == '+')) v.remove_prefix(1);
      FUZZ_CHECK(!v.empty());
      for (char c : v) FUZZ_CHECK(is_digit(c));
      break;
    }
    case type::double_type:
      FUZZ_CHECK(!n.value.empty());
      break;
    default:
      break;
  }
}

void check_error(const parse_result& r, decoder& d) {
  FUZZ_CHECK(r.what == parse_result::kind::error);
  FUZZ_CHECK(r.consumed == 0);
  FUZZ_CHECK(r.error);
  FUZZ_CHECK(&r.error.category() == &resp_category());
  FUZZ_CHECK(r.error.value() > 0 && r.error.value() < static_cast<int>(error::decoder_failed));
  // Once failed, the decoder stays failed whatever it is given.
  FUZZ_CHECK(d.failed());
  for (std::string_view more : {std::string_view(), std::string_view("+OK\r\n")}) {
    const parse_result again = d.next(more);
    FUZZ_CHECK(again.what == parse_result::kind::error);
    FUZZ_CHECK(again.error == error::decoder_failed);
    FUZZ_CHECK(again.consumed == 0);
    FUZZ_CHECK(d.failed());
  }
}

void check_need_more(const parse_result& r, decoder& d, std::string_view input, bool in_reply_before) {
  FUZZ_CHECK(r.what == parse_result::kind::need_more);
  FUZZ_CHECK(r.consumed == 0);
  FUZZ_CHECK(!r.error);
  FUZZ_CHECK(!d.failed());
  // Waiting is right only while the node at the front is incomplete: its first line has no CRLF
  // yet, or it is a blob whose payload has not all arrived. Otherwise the decoder would wait forever.
  const std::size_t cr = input.find('\r');
  if (cr != std::string_view::npos && cr + 1 < input.size()) {
    FUZZ_CHECK(input[cr + 1] == '\n');  // else: missing_crlf
    const char first = input[0];
    FUZZ_CHECK(first == '$' || first == '!' || first == '=');
    const std::size_t length = parse_count(input.substr(1, cr - 1), std::numeric_limits<std::size_t>::max());
    FUZZ_CHECK(input.size() - (cr + 2) < length + 2);
  }
  // Waiting changes no state: asking again gives the same answer.
  FUZZ_CHECK(d.in_reply() == in_reply_before);
  const parse_result again = d.next(input);
  FUZZ_CHECK(again.what == parse_result::kind::need_more);
  FUZZ_CHECK(d.in_reply() == in_reply_before);
}

// Decodes all of `wire` in one buffer.
outcome decode_whole(decoder& d, std::string_view wire) {
  outcome out;
  reply_model model(d.limits());
  std::string_view rest = wire;
  for (;;) {
    const bool in_reply_before = d.in_reply();
    const parse_result r = d.next(rest);
    if (r.what == parse_result::kind::error) {
      check_error(r, d);
      out.error = r.error;
      break;
    }
    if (r.what == parse_result::kind::need_more) {
      check_need_more(r, d, rest, in_reply_before);
      break;
    }
    check_node(r, rest, d.limits());
    model.on_node(r);
    FUZZ_CHECK(d.in_reply() == model.in_reply());
    FUZZ_CHECK(d.in_reply() == !r.end_of_reply);
    out.nodes.push_back({r.node.type, r.node.depth, r.node.size, r.node.value, r.end_of_reply});
    rest.remove_prefix(r.consumed);
    out.consumed += r.consumed;
  }
  return out;
}

// Hides the read buffer's bytes outside unread() from ASan, so that a read past the bytes the decoder
// was given is reported even though the buffer's memory continues.
class poisoner {
 public:
  poisoner(char* base, std::size_t capacity) : base_(base), capacity_(capacity) {}
  ~poisoner() { open(); }
  void open() { ASAN_UNPOISON_MEMORY_REGION(base_, capacity_); }
  void hide_outside(std::string_view unread) {
    open();
    const char* begin = unread.empty() ? base_ : unread.data();
    const char* end = begin + unread.size();
    ASAN_POISON_MEMORY_REGION(base_, static_cast<std::size_t>(begin - base_));
    ASAN_POISON_MEMORY_REGION(end, static_cast<std::size_t>(base_ + capacity_ - end));
  }

 private:
  char* base_;
  std::size_t capacity_;
};

// Piece sizes for the split run.
class splitter {
 public:
  splitter(unsigned pattern, std::uint8_t seed, std::size_t total)
      : pattern_(pattern), state_(seed * 2654435761u + 1), total_(total) {}

  std::size_t next() {
    switch (pattern_) {
      case 0: return 1;
      case 1: return 2;
      case 2: return 3;
      case 3: return 7;
      case 4: return 1 + rand() % 16;
      case 5: return 1 + rand() % 300;
      case 6: {
        // Two pieces, cut at a seed-chosen point.
        const std::size_t cut = std::max<std::size_t>(1, total_ * (state_ & 0xff) / 256);
        return calls_++ == 0 ? cut : total_;
      }
      default: return total_ + 1;  // everything that fits
    }
  }

 private:
  std::uint32_t rand() {
    state_ = state_ * 1103515245u + 12345u;
    return state_ >> 16;
  }
  unsigned pattern_;
  std::uint32_t state_;
  std::size_t total_;
  unsigned calls_ = 0;
};

// Decodes `wire` fed in pieces through a read_buffer and compares every node with the whole run.
void decode_split(decoder& d, std::string_view wire, unsigned pattern, std::uint8_t seed,
                  const outcome& whole) {
  const limits& l = d.limits();
  // Room for the largest node the limits admit and the input can hold: a blob is "$" + a number line
  // of at most 64 characters + CRLF + payload + CRLF. So the buffer never fills up with an
  // incomplete node.
  const std::size_t largest_node = std::min(l.max_bulk_length, wire.size()) + 69;
  read_buffer buffer(largest_node + seed % 32);
  std::size_t available = 0;
  char* const base = buffer.prepare(available);
  poisoner guard(base, buffer.capacity());
  reply_model model(l);
  splitter pieces(pattern, seed, wire.size());

  std::size_t fed = 0;
  std::size_t index = 0;  // next node of `whole` to match
  std::size_t consumed = 0;
  for (;;) {
    // Receive the next piece, as much of it as fits.
    guard.open();
    char* space = buffer.prepare(available);
    const std::size_t take = std::min({pieces.next(), wire.size() - fed, available});
    if (take > 0) std::memcpy(space, wire.data() + fed, take);
    buffer.commit(take);
    fed += take;
    guard.hide_outside(buffer.unread());

    // Decode every node available.
    for (;;) {
      const std::string_view input = buffer.unread();
      const bool in_reply_before = d.in_reply();
      const parse_result r = d.next(input);
      if (r.what == parse_result::kind::error) {
        check_error(r, d);
        // Same error at the same node as the whole run.
        FUZZ_CHECK(r.error == whole.error);
        FUZZ_CHECK(index == whole.nodes.size());
        FUZZ_CHECK(consumed == whole.consumed);
        return;
      }
      if (r.what == parse_result::kind::need_more) {
        check_need_more(r, d, input, in_reply_before);
        // The buffer holds the largest node the limits admit: waiting with a full buffer would be a
        // deadlock on a real connection.
        FUZZ_CHECK(!buffer.full());
        break;
      }
      check_node(r, input, l);
      model.on_node(r);
      FUZZ_CHECK(d.in_reply() == model.in_reply());
      FUZZ_CHECK(index < whole.nodes.size());
      const recorded& w = whole.nodes[index++];
      FUZZ_CHECK(r.node.type == w.t);
      FUZZ_CHECK(r.node.depth == w.depth);
      FUZZ_CHECK(r.node.size == w.size);
      FUZZ_CHECK(r.node.value == w.value);
      FUZZ_CHECK(r.end_of_reply == w.end_of_reply);
      consumed += r.consumed;
      buffer.consume(r.consumed);
      guard.hide_outside(buffer.unread());
    }
    if (fed == wire.size()) break;
  }
  // The input ended with the decoder waiting, as in the whole run.
  FUZZ_CHECK(!whole.error);
  FUZZ_CHECK(index == whole.nodes.size());
  FUZZ_CHECK(consumed == whole.consumed);
  FUZZ_CHECK(buffer.unread().size() == wire.size() - whole.consumed);
}

limits choose_limits(unsigned profile, std::uint8_t b) {
  limits l;  // profiles 0 and 1: the defaults
  switch (profile) {
    case 2:  // small
      l.max_depth = 3;
      l.max_elements = 8;
      l.max_bulk_length = 16;
      l.max_reply_size = 64;
      break;
    case 3:  // tiny
      l.max_depth = 1;
      l.max_elements = 2;
      l.max_bulk_length = 4;
      l.max_reply_size = 24;
      break;
    case 4:  // nothing allowed
      l.max_depth = 0;
      l.max_elements = 0;
      l.max_bulk_length = 0;
      l.max_reply_size = 0;
      break;
    case 5: {  // derived from the limits byte
      const unsigned h = b * 0x9E3779B1u;
      l.max_depth = b % 20;  // above decoder::depth_capacity too: it is capped
      l.max_elements = (h >> 8) % 40;
      l.max_bulk_length = (h >> 14) % 100;
      l.max_reply_size = (h >> 20) % 400;
      break;
    }
    case 6:  // deeper than the fixed stack: capped
      l.max_depth = 1000;
      l.max_elements = 16;
      break;
    case 7:  // "unlimited": no sum or +1 on a limit may overflow
      l.max_depth = std::numeric_limits<std::size_t>::max();
      l.max_elements = std::numeric_limits<std::size_t>::max();
      l.max_bulk_length = std::numeric_limits<std::size_t>::max();
      l.max_reply_size = std::numeric_limits<std::size_t>::max();
      break;
    default:
      break;
  }
  return l;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 3) return 0;
  const unsigned mode = data[0];
  const std::uint8_t seed = data[1];
  const limits l = choose_limits((mode >> 3) & 7, data[2]);
  const std::string_view wire(reinterpret_cast<const char*>(data) + 3, size - 3);

  decoder d(l);
  FUZZ_CHECK(d.limits().max_depth <= decoder::depth_capacity);
  FUZZ_CHECK(d.limits().max_depth == std::min(l.max_depth, decoder::depth_capacity));
  FUZZ_CHECK(!d.in_reply() && !d.failed());

  const outcome whole = decode_whole(d, wire);

  // The same input split into pieces, on a decoder that was reset: the same nodes, the same error.
  d.reset();
  FUZZ_CHECK(!d.in_reply() && !d.failed());
  decode_split(d, wire, mode & 7, seed, whole);

  // Reset after the split run (failed or in the middle of a reply), the decoder starts afresh.
  d.reset();
  const outcome again = decode_whole(d, wire);
  FUZZ_CHECK(again.error == whole.error);
  FUZZ_CHECK(again.consumed == whole.consumed);
  FUZZ_CHECK(again.nodes.size() == whole.nodes.size());
  for (std::size_t i = 0; i < whole.nodes.size(); ++i) {
    const recorded& a = again.nodes[i];
    const recorded& w = whole.nodes[i];
    FUZZ_CHECK(a.t == w.t && a.depth == w.depth && a.size == w.size && a.value == w.value &&
               a.end_of_reply == w.end_of_reply);
  }
  return 0;
}
