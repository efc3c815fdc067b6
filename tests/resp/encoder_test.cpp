#include <doctest/doctest.h>

#include <cstdint>
#include <limits>
#include <string>

#include "deadbolt/resp/encoder.hpp"

using deadbolt::resp::encoder;

TEST_CASE("a command is an array of bulk strings") {
  std::string out;
  encoder(out).command("EVALSHA", "abc", 1, "myLock", 30000, "uuid:1");
  CHECK(out ==
        "*6\r\n$7\r\nEVALSHA\r\n$3\r\nabc\r\n$1\r\n1\r\n$6\r\nmyLock\r\n$5\r\n30000\r\n$6\r\nuuid:1\r\n");
}

TEST_CASE("integers of every width and sign") {
  std::string out;
  encoder e(out);
  e.bulk(std::numeric_limits<std::int64_t>::min());
  e.bulk(std::numeric_limits<std::uint64_t>::max());
  e.bulk(0);
  e.bulk(static_cast<short>(-7));
  CHECK(out ==
        "$20\r\n-9223372036854775808\r\n"
        "$20\r\n18446744073709551615\r\n"
        "$1\r\n0\r\n"
        "$2\r\n-7\r\n");
}

TEST_CASE("binary-safe arguments and empty ones") {
  std::string out;
  const std::string binary("a\0\r\nb", 5);
  encoder(out).array(2).bulk(binary).bulk("");
  CHECK(out == std::string("*2\r\n$5\r\na\0\r\nb\r\n$0\r\n\r\n", 21));
}

TEST_CASE("encoding appends, and a reused buffer keeps its capacity") {
  std::string out;
  out.reserve(256);
  const auto* data = out.data();
  for (int i = 0; i < 100; ++i) {
    out.clear();
    encoder(out).command("PING");
  }
  CHECK(out == "*1\r\n$4\r\nPING\r\n");
  CHECK(out.data() == data);
}

TEST_CASE("an argument can be written from pieces") {
  std::string out;
  encoder(out).bulk_concat({"6e3814a1", ":", "42"});
  CHECK(out == "$11\r\n6e3814a1:42\r\n");
}
