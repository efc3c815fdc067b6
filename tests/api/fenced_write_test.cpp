// Fenced writes (deadbolt/fenced_write.hpp) against a real redis-server: a stale token is refused, an
// equal or newer one accepted, a fenced read moves the mark, bad input is a clear error.
#include <doctest/doctest.h>

#include <optional>
#include <string>

#include "deadbolt/deadbolt.hpp"
#include "deadbolt/fenced_write.hpp"
#include "support/lock_test.hpp"
#include "support/redis_server.hpp"
#include "support/sync.hpp"

using deadbolt::errc;
using deadbolt::fenced_result;
using deadbolt::test::call;
using deadbolt::test::config_for;
using deadbolt::test::unique_name;

namespace {

struct store {
  deadbolt::test::redis_server redis;
  deadbolt::test::io_thread io;
  deadbolt::client c{io.executor(), config_for(redis)};

  deadbolt::test::outcome<fenced_result> set(const std::string& key, std::uint64_t token, const std::string& value) {
    return call<fenced_result>([&](auto cb) { deadbolt::async_fenced_set(c, key, token, value, cb); });
  }
  deadbolt::test::outcome<fenced_result> get(const std::string& key, std::uint64_t token) {
    return call<fenced_result>([&](auto cb) { deadbolt::async_fenced_get(c, key, token, cb); });
  }
  deadbolt::test::outcome<fenced_result> set_by(const std::string& writer, const std::string& key, std::uint64_t token,
                                                const std::string& value) {
    return call<fenced_result>([&](auto cb) { deadbolt::async_fenced_set(c, key, token, writer, value, cb); });
  }
  deadbolt::test::outcome<fenced_result> get_by(const std::string& writer, const std::string& key, std::uint64_t token) {
    return call<fenced_result>([&](auto cb) { deadbolt::async_fenced_get(c, key, token, writer, cb); });
  }
  std::optional<std::string> raw(const std::string& key) {
    auto r = call<deadbolt::reply>([&](auto cb) { c.async_command({"GET", key}, cb); });
    REQUIRE_FALSE(r.ec);
    return r.value.is_null() ? std::nullopt : std::optional<std::string>(r.value.text);
  }
};

}  // namespace

TEST_CASE("fence_key_of keeps the resource's slot") {
  CHECK(deadbolt::fence_key_of("balance") == "{balance}:fence");
  CHECK(deadbolt::fence_key_of("{user:7}:balance") == "{user:7}:balance:fence");
  CHECK(deadbolt::fence_key_of("a{}b") == "{a{}b}:fence");  // an empty tag is no tag
}

TEST_CASE("a stale token is refused; an equal or newer one is accepted") {
  store s;
  const std::string key = unique_name("fenced");
  auto first = s.set(key, 5, "five");
  REQUIRE_FALSE(first.ec);
  CHECK(first.value.accepted);
  CHECK(first.value.newest_token == 5);

  auto stale = s.set(key, 4, "four");
  REQUIRE_FALSE(stale.ec);
  CHECK_FALSE(stale.value.accepted);
  CHECK(stale.value.newest_token == 5);
  CHECK(s.raw(key) == "five");

  auto equal = s.set(key, 5, "five again");
  REQUIRE_FALSE(equal.ec);
  CHECK(equal.value.accepted);
  auto newer = s.set(key, 6, "six");
  REQUIRE_FALSE(newer.ec);
  CHECK(newer.value.accepted);
  CHECK(newer.value.newest_token == 6);
  CHECK(s.raw(key) == "six");
  CHECK(s.raw(deadbolt::fence_key_of(key)) == "6");
}

TEST_CASE("a fenced read moves the mark: an older holder's write after it is refused") {
  store s;
  const std::string key = unique_name("fenced-read");
  auto empty = s.get(key, 1);
  REQUIRE_FALSE(empty.ec);
  CHECK(empty.value.accepted);
  CHECK_FALSE(empty.value.value.has_value());
  REQUIRE(s.set(key, 1, "10").value.accepted);  // holder 1 reads, then writes

  auto read = s.get(key, 2);  // holder 2 reads 10 ...
  REQUIRE(read.value.accepted);
  CHECK(read.value.value == "10");
  auto late = s.set(key, 1, "11");  // ... so holder 1's late write cannot overwrite what 2 read
  CHECK_FALSE(late.value.accepted);
  CHECK(late.value.newest_token == 2);
  CHECK_FALSE(s.get(key, 1).value.accepted);
}

TEST_CASE("two holders of one token: the writer the fence accepted it from goes on, the other is refused") {
  // Issue 27: after a planned Sentinel failover two threads held token 323 at once (one through the
  // old master, one through the new), both read 649 and both wrote 650: an increment was lost.
  store s;
  const std::string key = unique_name("fenced-twice");
  const std::string a = deadbolt::fence_writer("client-l2", 0);  // thread b0, on the old master
  const std::string b = deadbolt::fence_writer("client-l2", 3);  // thread b3, on the new master
  CHECK(a == "client-l2:0");
  REQUIRE(s.set_by(a, key, 322, "648").value.accepted);

  auto a_reads = s.get_by(a, key, 323);
  REQUIRE_FALSE(a_reads.ec);
  CHECK(a_reads.value.accepted);
  auto b_reads = s.get_by(b, key, 323);  // the same token, from another writer
  REQUIRE_FALSE(b_reads.ec);
  CHECK_FALSE(b_reads.value.accepted);
  CHECK(b_reads.value.newest_token == 323);
  auto b_writes = s.set_by(b, key, 323, "649");
  CHECK_FALSE(b_writes.value.accepted);
  auto a_writes = s.set_by(a, key, 323, "649");  // the first writer of 323 reads, then writes
  CHECK(a_writes.value.accepted);
  CHECK(s.raw(key) == "649");
  CHECK(s.get_by(a, key, 323).value.accepted);  // and keeps going with it

  // A newer token moves the fence to its writer, whoever held the older one.
  CHECK(s.set_by(b, key, 324, "650").value.accepted);
  CHECK_FALSE(s.set_by(a, key, 324, "651").value.accepted);
  CHECK(s.raw(key) == "650");
  // An anonymous writer (no writer given) is another writer too.
  CHECK_FALSE(s.set(key, 324, "anonymous").value.accepted);
}

TEST_CASE("a fence written without writers: anonymous writers go on as before, a named one needs a newer token") {
  store s;
  const std::string key = unique_name("fenced-anonymous");
  REQUIRE(s.set(key, 7, "x").value.accepted);
  CHECK(s.raw(deadbolt::fence_key_of(key)) == "7");  // the format a fence had before writers
  CHECK(s.set(key, 7, "y").value.accepted);
  CHECK_FALSE(s.set_by("w", key, 7, "z").value.accepted);
  CHECK(s.set_by("w", key, 8, "z").value.accepted);
  CHECK(s.raw(key) == "z");
}

TEST_CASE("tokens compare exactly up to 2^64 - 1") {
  store s;
  const std::string key = unique_name("fenced-big");
  REQUIRE(s.set(key, 18446744073709551614ull, "a").value.accepted);
  // 2^53 + 1 and 2^53 are the same double: compared as Lua numbers, they would be equal.
  CHECK_FALSE(s.set(key, 18446744073709551613ull, "b").value.accepted);
  auto top = s.set(key, 18446744073709551615ull, "c");
  CHECK(top.value.accepted);
  CHECK(top.value.newest_token == 18446744073709551615ull);
  const std::string other = unique_name("fenced-2^53");
  REQUIRE(s.set(other, 9007199254740993ull, "x").value.accepted);
  CHECK_FALSE(s.set(other, 9007199254740992ull, "y").value.accepted);
}

TEST_CASE("bad input is a clear error, and changes nothing") {
  store s;
  const std::string key = unique_name("fenced-bad");
  CHECK(s.set(key, 0, "zero").ec == errc::invalid_argument);  // fenced_lock's tokens start at 1
  CHECK(s.set("", 1, "no key").ec == errc::invalid_argument);
  CHECK(s.get("", 1).ec == errc::invalid_argument);
  CHECK(s.set_by("", key, 1, "no writer").ec == errc::invalid_argument);  // a named writer is not empty
  CHECK(s.get_by("", key, 1).ec == errc::invalid_argument);
  CHECK_FALSE(s.raw(deadbolt::fence_key_of(key)).has_value());

  // A fence key that holds something else: the script refuses, in words.
  REQUIRE_FALSE(call<deadbolt::reply>([&](auto cb) { s.c.async_command({"SET", deadbolt::fence_key_of(key), "oops"}, cb); }).ec);
  auto corrupt = s.set(key, 3, "three");
  CHECK(corrupt.ec == errc::server_error);
  CHECK(corrupt.value.error.find("the fence key does not hold a fencing token") != std::string::npos);
  CHECK_FALSE(s.raw(key).has_value());

  // A resource of another type: WRONGTYPE, with the server's words.
  const std::string hash = unique_name("fenced-hash");
  REQUIRE_FALSE(call<deadbolt::reply>([&](auto cb) { s.c.async_command({"HSET", hash, "f", "v"}, cb); }).ec);
  auto wrong = s.get(hash, 1);
  CHECK(wrong.ec == errc::wrong_type);
  CHECK(wrong.value.error.find("WRONGTYPE") != std::string::npos);
}

TEST_CASE("with a fenced lock's tokens: the holder whose lease lapsed is refused") {
  store s;
  const std::string name = unique_name("fenced-ledger");
  const std::string key = name + ":balance";
  auto lock = s.c.fenced_lock(name);
  auto a = call<std::uint64_t>([&](auto cb) { lock.async_lock(1, std::chrono::milliseconds(100), cb); });
  REQUIRE_FALSE(a.ec);
  REQUIRE(s.get(key, a.value).value.accepted);  // A reads, then stalls past its 100 ms lease
  auto b = call<std::uint64_t>([&](auto cb) { lock.async_lock(2, cb); });  // B gets it once A's lease ends
  REQUIRE_FALSE(b.ec);
  CHECK(b.value > a.value);
  CHECK(s.set(key, b.value, "B").value.accepted);
  auto late = s.set(key, a.value, "A, stale");
  CHECK_FALSE(late.value.accepted);
  CHECK(s.raw(key) == "B");
  REQUIRE_FALSE(call([&](auto cb) { lock.async_unlock(2, cb); }).ec);
}
