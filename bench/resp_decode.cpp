// resp_decode: decodes ~64 MiB of a lock client's typical replies with deadbolt's RESP decoder and
// with hiredis's reader, both fed the same bytes in 16 KiB chunks, and compares replies per second
// and heap allocations per reply. Prints one summary line last:
//   resp_decode ratio=… allocs_per_reply=… replies_per_s=… hiredis_replies_per_s=… hiredis_allocs_per_reply=…
#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "alloc_counter.hpp"
#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/read_buffer.hpp"

namespace {

constexpr std::size_t input_size = 64u << 20;
constexpr std::size_t chunk_size = 16u << 10;
constexpr int repeats = 5;

[[noreturn]] void die(const char* what) {
  std::fprintf(stderr, "resp_decode: %s\n", what);
  std::exit(1);
}

// splitmix64: a fixed-seed generator whose output does not depend on the standard library.
struct prng {
  std::uint64_t state;
  std::uint64_t next() {
    std::uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
  unsigned below(unsigned n) { return static_cast<unsigned>(next() % n); }
};

void append_bulk(std::string& out, std::string_view s) {
  out += '$';
  out += std::to_string(s.size());
  out += "\r\n";
  out += s;
  out += "\r\n";
}

// A Redisson-style lock owner: "<uuid>:<thread id>".
std::string owner_id(prng& rng) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string id;
  for (int group : {8, 4, 4, 4, 12}) {
    if (!id.empty()) id += '-';
    for (int i = 0; i < group; ++i) id += hex[rng.below(16)];
  }
  return id + ':' + std::to_string(1 + rng.below(200));
}

// The reply mix of a lock client: 40 % nulls and integers (lock acquired, TTLs, unlock results),
// 30 % owner ids, 20 % pub/sub unlock messages, 10 % arrays of ten 100-byte bulk strings.
std::string make_input(std::size_t& replies) {
  prng rng{0x64656164626f6c74u};  // "deadbolt"
  std::string out;
  out.reserve(input_size + 4096);
  replies = 0;
  while (out.size() < input_size) {
    const unsigned pick = rng.below(100);
    if (pick < 40) {
      switch (rng.below(5)) {
        case 0: case 1: out += "$-1\r\n"; break;
        case 2: out += ':' + std::to_string(rng.below(30001)) + "\r\n"; break;
        case 3: out += ":-2\r\n"; break;
        default: out += rng.below(2) != 0 ? ":1\r\n" : ":0\r\n"; break;
      }
    } else if (pick < 70) {
      append_bulk(out, owner_id(rng));
    } else if (pick < 90) {
      out += "*3\r\n";
      append_bulk(out, "message");
      append_bulk(out, "redisson_lock__channel:{name-" + std::to_string(rng.below(1000)) + '}');
      append_bulk(out, "0");
    } else {
      out += "*10\r\n";
      std::string item(100, ' ');
      for (int i = 0; i < 10; ++i) {
        for (char& c : item) c = static_cast<char>('a' + rng.below(26));
        append_bulk(out, item);
      }
    }
    ++replies;
  }
  return out;
}

struct result {
  double seconds;
  std::size_t replies;
  std::size_t allocations;
};

using clock_type = std::chrono::steady_clock;

double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

// What a connection does: append a chunk, decode every node available, consume, repeat.
result run_deadbolt(std::string_view input) {
  deadbolt::resp::read_buffer buffer(4 * chunk_size);
  deadbolt::resp::decoder decoder;
  std::size_t replies = 0;
  deadbolt::bench::start_counting_allocations();
  const auto start = clock_type::now();
  for (std::size_t fed = 0; fed < input.size();) {
    std::size_t space = 0;
    char* dest = buffer.prepare(space);
    const std::size_t n = std::min({chunk_size, input.size() - fed, space});
    if (n == 0) die("read_buffer full");
    std::memcpy(dest, input.data() + fed, n);
    buffer.commit(n);
    fed += n;
    for (;;) {
      const deadbolt::resp::parse_result r = decoder.next(buffer.unread());
      if (r.what != deadbolt::resp::parse_result::kind::node) {
        if (r.what == deadbolt::resp::parse_result::kind::error) die("deadbolt decoder error");
        break;
      }
      replies += r.end_of_reply ? 1 : 0;
      buffer.consume(r.consumed);
    }
  }
  const double seconds = seconds_since(start);
  const std::size_t allocations = deadbolt::bench::stop_counting_allocations();
  if (!buffer.unread().empty()) die("deadbolt left bytes undecoded");
  return {seconds, replies, allocations};
}

result run_hiredis(std::string_view input) {
  redisReader* reader = redisReaderCreate();
  if (reader == nullptr) die("redisReaderCreate failed");
  std::size_t replies = 0;
  deadbolt::bench::start_counting_allocations();
  const auto start = clock_type::now();
  for (std::size_t fed = 0; fed < input.size();) {
    const std::size_t n = std::min(chunk_size, input.size() - fed);
    if (redisReaderFeed(reader, input.data() + fed, n) != REDIS_OK) die("redisReaderFeed failed");
    fed += n;
    for (;;) {
      void* reply = nullptr;
      if (redisReaderGetReply(reader, &reply) != REDIS_OK) die("hiredis reader error");
      if (reply == nullptr) break;
      freeReplyObject(reply);
      ++replies;
    }
  }
  const double seconds = seconds_since(start);
  const std::size_t allocations = deadbolt::bench::stop_counting_allocations();
  redisReaderFree(reader);
  return {seconds, replies, allocations};
}

// Keeps the fastest run; the allocation count is the same in every run.
void keep_best(result& best, const result& r) {
  if (best.replies == 0 || r.seconds < best.seconds) best = r;
}

}  // namespace

int main() {
  std::size_t expected = 0;
  const std::string input = make_input(expected);
  std::fprintf(stderr, "resp_decode: %zu bytes, %zu replies, %zu-byte chunks, best of %d\n",
               input.size(), expected, chunk_size, repeats);

  result ours{}, theirs{};
  for (int i = 0; i < repeats; ++i) {  // interleaved, so that a noisy moment hurts both alike
    const result a = run_deadbolt(input);
    const result b = run_hiredis(input);
    if (a.replies != expected || b.replies != expected) {
      std::fprintf(stderr, "resp_decode: reply counts differ: generated %zu, deadbolt %zu, hiredis %zu\n",
                   expected, a.replies, b.replies);
      return 1;
    }
    keep_best(ours, a);
    keep_best(theirs, b);
  }

  const double ours_rate = static_cast<double>(ours.replies) / ours.seconds;
  const double theirs_rate = static_cast<double>(theirs.replies) / theirs.seconds;
  std::printf("resp_decode ratio=%.2f allocs_per_reply=%.3f replies_per_s=%.0f hiredis_replies_per_s=%.0f "
              "hiredis_allocs_per_reply=%.3f\n",
              ours_rate / theirs_rate, static_cast<double>(ours.allocations) / static_cast<double>(ours.replies),
              ours_rate, theirs_rate,
              static_cast<double>(theirs.allocations) / static_cast<double>(theirs.replies));
  return 0;
}
