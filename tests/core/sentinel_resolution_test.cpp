// Sentinel resolution, driven without sockets (src/sentinel/sentinel_resolution.hpp): which sentinel
// is asked first (the shared preference: the last that named the master, the one after the last that
// could not say), unreachable, silent and unknowing sentinels skipped, what a round that nobody
// answered ends with, a +switch-master answered once without asking, a round started while a question
// is out, cancel and stop; and the replies read from their bytes (sentinel_replies.hpp): the master's
// address, the replicas counted, a switch announcement.
#include <doctest/doctest.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/resp/decoder.hpp"
#include "sentinel/sentinel_replies.hpp"
#include "sentinel/sentinel_resolution.hpp"

// A namespace of its own: the socket-free suites share one unity translation unit.
namespace sentinel_resolution_test {

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;
using deadbolt::errc;
using detail::server_address;
using resolution = detail::sentinel_resolution;
using act = resolution::action::kind;

const std::error_code refused = std::make_error_code(std::errc::connection_refused);
const std::error_code silent = make_error_code(errc::timed_out);  // no answer within the bound
const std::error_code unknown = make_error_code(errc::unknown_master);
const std::error_code garbled = make_error_code(errc::protocol_error);

server_address at(std::string host, std::uint16_t port, bool numeric = true) {
  server_address a;
  a.host = std::move(host);
  a.port = port;
  a.numeric = numeric;
  return a;
}

const server_address master_a = at("10.0.0.1", 6379);
const server_address master_b = at("10.0.0.2", 6379);
const std::vector<server_address> two_replicas = {at("10.0.0.2", 6379), at("10.0.0.3", 6379)};

/// An action in words, so that a failed CHECK shows what came instead.
std::string describe(const resolution::action& a) {
  switch (a.what) {
    case act::none: return "none";
    case act::ask: return "ask " + std::to_string(a.sentinel);
    case act::ask_soon: return "ask_soon";
    case act::answer: return "answer " + a.address.host + ":" + std::to_string(a.address.port);
    case act::fail: return "fail " + a.error.message();
  }
  return "?";
}

std::string fail_with(std::error_code ec) { return "fail " + ec.message(); }

/// One address source of a client with `sentinels` sentinels; the preference and the watch's last
/// switch are the client's, shared with its other sources.
struct source {
  explicit source(std::size_t sentinels, std::size_t first = 0) : core(sentinels, preference, &announced) {
    preference.first = first;
  }
  detail::sentinel_preference preference;
  detail::master_switch announced;
  resolution core;

  std::string start() { return describe(core.start_round()); }
  std::string answer(const server_address& master, const std::vector<server_address>& replicas = {}) {
    return describe(core.answered(master, replicas));
  }
  std::string fail(std::error_code why) { return describe(core.failed(why)); }
  std::string resume() { return describe(core.resume()); }
  /// The watch announces a switch to `to`.
  void switched(const server_address& to) {
    announced.to = to;
    ++announced.count;
  }
};

// ---- which sentinel is asked ----

TEST_CASE("sentinel resolution: a round asks the preferred sentinel; the one that names the master is preferred next") {
  source s(3, 1);
  CHECK(s.start() == "ask 1");
  CHECK(s.core.asking());
  CHECK(s.answer(master_a, two_replicas) == "answer 10.0.0.1:6379");
  CHECK_FALSE(s.core.asking());
  CHECK(s.preference.first == 1);
  CHECK(s.core.replicas() == two_replicas);
  CHECK(s.start() == "ask 1");  // the next round (a reconnect) starts there again
}

TEST_CASE("sentinel resolution: the preference is an index into the list, taken modulo its size") {
  source s(3, 7);
  CHECK(s.start() == "ask 1");
  CHECK(s.answer(master_a) == "answer 10.0.0.1:6379");
  CHECK(s.preference.first == 1);
}

TEST_CASE("sentinel resolution: an unreachable sentinel is skipped: the next is asked, from a callback of its own") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");  // not from inside the failing connection's callbacks
  CHECK_FALSE(s.core.asking());
  CHECK(s.preference.first == 1);  // every source of the client starts after it now
  CHECK(s.resume() == "ask 1");
  CHECK(s.answer(master_a) == "answer 10.0.0.1:6379");
  CHECK(s.preference.first == 1);
}

TEST_CASE("sentinel resolution: a silent sentinel (no answer within the bound) and one that does not know the name are skipped") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(silent) == "ask_soon");
  CHECK(s.resume() == "ask 1");
  CHECK(s.fail(unknown) == "ask_soon");
  CHECK(s.preference.first == 2);
  CHECK(s.resume() == "ask 2");
  CHECK(s.answer(master_b) == "answer 10.0.0.2:6379");
  CHECK(s.preference.first == 2);
}

TEST_CASE("sentinel resolution: the preference wraps around the list") {
  source s(3, 2);
  CHECK(s.start() == "ask 2");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.preference.first == 0);
  CHECK(s.resume() == "ask 0");
}

TEST_CASE("sentinel resolution: each question starts at the sentinel preferred then, which another source may have moved") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(silent) == "ask_soon");
  CHECK(s.preference.first == 1);
  s.preference.first = 2;  // meanwhile another source of the client found 1 silent too
  CHECK(s.resume() == "ask 2");
}

TEST_CASE("sentinel resolution: a failure does not move a preference another source already moved") {
  source s(3);
  CHECK(s.start() == "ask 0");
  s.preference.first = 2;  // another source: 2 named the master meanwhile
  CHECK(s.fail(silent) == "ask_soon");
  CHECK(s.preference.first == 2);
}

// ---- a round nobody answered ----

TEST_CASE("sentinel resolution: each sentinel is asked once per round; none naming the master fails it with the last error") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(silent) == "ask_soon");
  CHECK(s.resume() == "ask 1");
  CHECK(s.fail(garbled) == "ask_soon");
  CHECK(s.resume() == "ask 2");
  CHECK(s.fail(refused) == fail_with(refused));
  CHECK(s.resume() == "none");  // nothing asked after the round's end
  CHECK(s.preference.first == 0);  // the one after the last that failed
  // The connection backs off and starts another round: all three are asked again.
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.resume() == "ask 1");
}

TEST_CASE("sentinel resolution: when one sentinel answered that it does not know the name, the round fails with unknown_master") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(unknown) == "ask_soon");
  CHECK(s.resume() == "ask 1");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.resume() == "ask 2");
  CHECK(s.fail(silent) == fail_with(unknown));
}

TEST_CASE("sentinel resolution: a new round forgets what the last one heard") {
  source s(2);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(unknown) == "ask_soon");
  CHECK(s.resume() == "ask 1");
  CHECK(s.fail(unknown) == fail_with(unknown));
  // Next round: no sentinel says it does not know the name any more.
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.resume() == "ask 1");
  CHECK(s.fail(silent) == fail_with(silent));
}

TEST_CASE("sentinel resolution: one sentinel: its failure ends the round at once") {
  source s(1);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == fail_with(refused));
  CHECK(s.preference.first == 0);
  CHECK(s.start() == "ask 0");
}

TEST_CASE("sentinel resolution: no sentinel at all is a configuration error, never a division by zero") {
  source s(0);
  CHECK(s.start() == fail_with(make_error_code(errc::invalid_config)));
  CHECK_FALSE(s.core.asking());
}

// ---- a switch announced by the watch ----

TEST_CASE("sentinel resolution: after a switch the next round answers the new master without asking, once") {
  source s(3);
  s.switched(master_b);
  CHECK(s.start() == "answer 10.0.0.2:6379");
  CHECK_FALSE(s.core.asking());
  CHECK(s.core.replicas().empty());  // not asked: its replicas are not known here
  CHECK(s.start() == "ask 0");  // the reconnect after it asks the sentinels again
  CHECK(s.answer(master_b) == "answer 10.0.0.2:6379");
  // Two switches before a round: one answer, the latest.
  s.switched(master_a);
  s.switched(master_b);
  CHECK(s.start() == "answer 10.0.0.2:6379");
  CHECK(s.start() == "ask 0");
}

TEST_CASE("sentinel resolution: a switch announced before the source was made is not answered: the sentinels name it") {
  detail::sentinel_preference preference;
  detail::master_switch announced;
  announced.to = master_b;
  announced.count = 4;
  resolution core(3, preference, &announced);
  CHECK(describe(core.start_round()) == "ask 0");
}

TEST_CASE("sentinel resolution: a source without a watch (the gate's) only asks") {
  detail::sentinel_preference preference;
  resolution core(2, preference, nullptr);
  CHECK(describe(core.start_round()) == "ask 0");
}

TEST_CASE("sentinel resolution: a switch's answer drops the replicas the last sentinel named") {
  source s(2);
  CHECK(s.start() == "ask 0");
  CHECK(s.answer(master_a, two_replicas) == "answer 10.0.0.1:6379");
  CHECK(s.core.replicas().size() == 2);
  s.switched(master_b);
  CHECK(s.start() == "answer 10.0.0.2:6379");
  CHECK(s.core.replicas().empty());
}

// ---- one question at a time, cancel, stop ----

TEST_CASE("sentinel resolution: a round started while a question is out takes its answer") {
  source s(3);
  CHECK(s.start() == "ask 0");
  s.core.cancel();  // the connection gave up on it (a disconnect)
  CHECK(s.start() == "none");  // nothing new is asked
  CHECK(s.core.asking());
  CHECK(s.answer(master_a) == "answer 10.0.0.1:6379");
}

TEST_CASE("sentinel resolution: a round started while a question is out counts its sentinels afresh") {
  source s(2);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.resume() == "ask 1");  // the second of two
  s.core.cancel();
  CHECK(s.start() == "none");
  CHECK(s.fail(refused) == "ask_soon");  // the first of this round: another is asked
  CHECK(s.resume() == "ask 0");
}

TEST_CASE("sentinel resolution: an answer after cancel reaches nobody, but the sentinel that gave it is preferred") {
  source s(3, 2);
  CHECK(s.start() == "ask 2");
  s.core.cancel();
  CHECK(s.answer(master_a, two_replicas) == "none");
  CHECK(s.preference.first == 2);
  CHECK(s.core.replicas() == two_replicas);
}

TEST_CASE("sentinel resolution: a failure after cancel moves the preference and asks nobody else") {
  source s(3);
  CHECK(s.start() == "ask 0");
  s.core.cancel();
  CHECK(s.fail(refused) == "none");
  CHECK(s.preference.first == 1);
  CHECK(s.resume() == "none");
  // A pending turn that comes after cancel asks nobody either.
  CHECK(s.start() == "ask 1");
  CHECK(s.fail(refused) == "ask_soon");
  s.core.cancel();
  CHECK(s.resume() == "none");
}

TEST_CASE("sentinel resolution: a turn that comes after a new round already asked asks nothing more") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");
  s.core.cancel();
  CHECK(s.start() == "ask 1");  // a new round asked at once
  CHECK(s.resume() == "none");   // the old round's turn: one question at a time
  CHECK(s.core.sentinel_asked() == 1);
}

TEST_CASE("sentinel resolution: after stop nothing is asked or answered, and late news moves nothing") {
  source s(3);
  CHECK(s.start() == "ask 0");
  s.core.stop();
  CHECK_FALSE(s.core.asking());
  CHECK(s.answer(master_a) == "none");
  CHECK(s.fail(refused) == "none");
  CHECK(s.preference.first == 0);
  CHECK(s.resume() == "none");
  CHECK(s.start() == "none");
  s.switched(master_b);
  CHECK(s.start() == "none");  // not even a switch's answer
}

TEST_CASE("sentinel resolution: news when no question is out is ignored (a second report of one question)") {
  source s(3);
  CHECK(s.start() == "ask 0");
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.fail(refused) == "none");
  CHECK(s.preference.first == 1);
  CHECK(s.answer(master_a) == "none");
  CHECK(s.preference.first == 1);
  CHECK(s.resume() == "ask 1");
}

TEST_CASE("sentinel resolution: the replicas are those named with the last answer: none while asking or after a failure") {
  source s(2);
  CHECK(s.start() == "ask 0");
  CHECK(s.answer(master_a, two_replicas) == "answer 10.0.0.1:6379");
  CHECK(s.core.replicas() == two_replicas);
  CHECK(s.start() == "ask 0");
  CHECK(s.core.replicas().empty());
  CHECK(s.fail(refused) == "ask_soon");
  CHECK(s.core.replicas().empty());
}

TEST_CASE("sentinel resolution: a sentinel has a quarter of the shorter timeout to answer, at least 1 ms") {
  using std::chrono::milliseconds;
  deadbolt::config cfg;
  cfg.connect_timeout = milliseconds(2000);
  cfg.command_timeout = milliseconds(1000);
  CHECK(detail::sentinel_answer_bound(cfg) == milliseconds(250));
  cfg.connect_timeout = milliseconds(400);
  CHECK(detail::sentinel_answer_bound(cfg) == milliseconds(100));
  cfg.connect_timeout = milliseconds(2);
  CHECK(detail::sentinel_answer_bound(cfg) == milliseconds(1));
}

// ---- the replies, from their bytes ----

std::string bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }

/// Streams one reply's nodes into `reader`, as the pipeline routes them.
template <typename Reader>
void feed(Reader& reader, std::string_view bytes) {
  resp::decoder decoder;
  for (;;) {
    const resp::parse_result r = decoder.next(bytes);
    REQUIRE(r.what == resp::parse_result::kind::node);
    reader.take(r.node);
    bytes.remove_prefix(r.consumed);
    if (r.end_of_reply) break;
  }
  CHECK(bytes.empty());
}

/// GET-MASTER-ADDR-BY-NAME's reply `bytes`, read: the error code, and the address in words.
std::string master_reply(std::string_view bytes, std::error_code transport = {}) {
  detail::master_address_reader reader;
  reader.reset();
  feed(reader, bytes);
  const std::error_code ec = reader.finish(transport);
  if (ec) return fail_with(ec);
  const server_address& a = reader.found();
  return a.host + ":" + std::to_string(a.port) + (a.numeric ? " numeric" : " named");
}

TEST_CASE("sentinel replies: the master's address, numeric or a name to resolve, in RESP2 and RESP3") {
  CHECK(master_reply("*2\r\n" + bulk("127.0.0.1") + bulk("6380")) == "127.0.0.1:6380 numeric");
  CHECK(master_reply("*2\r\n" + bulk("::1") + bulk("6380")) == "::1:6380 numeric");
  CHECK(master_reply("*2\r\n" + bulk("redis-1.example") + bulk("65535")) == "redis-1.example:65535 named");
}

TEST_CASE("sentinel replies: nil is a name the sentinel does not know") {
  CHECK(master_reply("*-1\r\n") == fail_with(unknown));  // RESP2
  CHECK(master_reply("$-1\r\n") == fail_with(unknown));
  CHECK(master_reply("_\r\n") == fail_with(unknown));  // RESP3
}

TEST_CASE("sentinel replies: an error reply or anything but a host and a port is a protocol error") {
  CHECK(master_reply("-NOPERM this user has no permissions to run the 'sentinel' command\r\n") == fail_with(garbled));
  CHECK(master_reply("*1\r\n" + bulk("127.0.0.1")) == fail_with(garbled));
  CHECK(master_reply("*3\r\n" + bulk("127.0.0.1") + bulk("6379") + bulk("x")) == fail_with(garbled));
  CHECK(master_reply("*2\r\n" + bulk("") + bulk("6379")) == fail_with(garbled));
  CHECK(master_reply("*2\r\n" + bulk("127.0.0.1") + bulk("0")) == fail_with(garbled));
  CHECK(master_reply("*2\r\n" + bulk("127.0.0.1") + bulk("65536")) == fail_with(garbled));
  CHECK(master_reply("*2\r\n" + bulk("127.0.0.1") + bulk("63x")) == fail_with(garbled));
  CHECK(master_reply("*2\r\n" + bulk("127.0.0.1") + bulk("-1")) == fail_with(garbled));
  CHECK(master_reply("+OK\r\n") == fail_with(garbled));
  CHECK(master_reply("*0\r\n") == fail_with(garbled));
}

TEST_CASE("sentinel replies: the transport's failure stands for the answer") {
  CHECK(master_reply("*-1\r\n", silent) == fail_with(silent));
  detail::master_address_reader reader;
  reader.reset();
  CHECK(reader.finish(make_error_code(errc::outcome_unknown)) == errc::outcome_unknown);
}

TEST_CASE("sentinel replies: a reader reset reads the next reply afresh") {
  detail::master_address_reader reader;
  reader.reset();
  feed(reader, "-ERR no\r\n");
  CHECK(reader.finish({}) == errc::protocol_error);
  reader.reset();
  feed(reader, "*2\r\n" + bulk("10.0.0.9") + bulk("7000"));
  CHECK_FALSE(reader.finish({}));
  CHECK(reader.found() == at("10.0.0.9", 7000));
}

/// One replica as SENTINEL REPLICAS lists it (RESP2: a flat list of fields), with `flags`.
std::string replica_resp2(std::string_view ip, std::string_view port, std::string_view flags) {
  return "*8\r\n" + bulk("name") + bulk(std::string(ip) + ":" + std::string(port)) + bulk("ip") + bulk(ip) +
         bulk("port") + bulk(port) + bulk("flags") + bulk(flags);
}
/// The same as RESP3 gives it: a map.
std::string replica_resp3(std::string_view ip, std::string_view port, std::string_view flags) {
  return "%4\r\n" + bulk("name") + bulk(std::string(ip) + ":" + std::string(port)) + bulk("ip") + bulk(ip) +
         bulk("port") + bulk(port) + bulk("flags") + bulk(flags);
}

std::vector<server_address> replicas_of(std::string_view bytes, std::error_code transport = {}) {
  detail::sentinel_replicas_reader reader;
  reader.reset();
  feed(reader, bytes);
  reader.finish(transport);
  return reader.replicas();
}

TEST_CASE("sentinel replies: the replicas the sentinel does not think down, in RESP2 and RESP3") {
  const std::string listed = replica_resp2("10.0.0.2", "6379", "slave") +
                             replica_resp2("10.0.0.3", "6380", "s_down,slave") +
                             replica_resp2("10.0.0.4", "6381", "slave,disconnected") +
                             replica_resp2("10.0.0.5", "6382", "o_down,slave") + replica_resp2("db-6", "6383", "slave");
  const auto resp2 = replicas_of("*5\r\n" + listed);
  // Down (s_down, o_down) left out; "disconnected" counts: a promotion cuts the sentinels' links.
  REQUIRE(resp2.size() == 3);
  CHECK(resp2[0] == at("10.0.0.2", 6379));
  CHECK(resp2[1] == at("10.0.0.4", 6381));
  CHECK(resp2[2] == at("db-6", 6383, false));

  const auto resp3 = replicas_of("*2\r\n" + replica_resp3("10.0.0.2", "6379", "slave") +
                                 replica_resp3("10.0.0.3", "6380", "s_down,slave"));
  REQUIRE(resp3.size() == 1);
  CHECK(resp3[0] == at("10.0.0.2", 6379));
}

TEST_CASE("sentinel replies: at most `most` replicas are kept, in the sentinel's order") {
  std::string listed;
  const std::size_t many = detail::sentinel_replicas_reader::most + 3;
  for (std::size_t i = 0; i < many; ++i) listed += replica_resp2("10.0.1." + std::to_string(i), "6379", "slave");
  const auto kept = replicas_of("*" + std::to_string(many) + "\r\n" + listed);
  REQUIRE(kept.size() == detail::sentinel_replicas_reader::most);
  CHECK(kept.front().host == "10.0.1.0");
  CHECK(kept.back().host == "10.0.1." + std::to_string(detail::sentinel_replicas_reader::most - 1));
  // Down ones do not take a place.
  const auto skipped = replicas_of("*" + std::to_string(many + 1) + "\r\n" + replica_resp2("10.0.2.1", "1", "s_down") + listed);
  REQUIRE(skipped.size() == detail::sentinel_replicas_reader::most);
  CHECK(skipped.front().host == "10.0.1.0");
}

TEST_CASE("sentinel replies: a replica without an address, an ACL's refusal or a failed request names none") {
  CHECK(replicas_of("*2\r\n" + replica_resp2("", "6379", "slave") + replica_resp2("10.0.0.2", "x", "slave")).empty());
  CHECK(replicas_of("*1\r\n" + replica_resp2("10.0.0.2", "0", "slave")).empty());
  CHECK(replicas_of("*1\r\n" + replica_resp2("10.0.0.2", "65536", "slave")).empty());
  CHECK(replicas_of("-NOPERM this user has no permissions to run the 'sentinel|replicas' command\r\n").empty());
  CHECK(replicas_of("*0\r\n").empty());
  CHECK(replicas_of("*1\r\n" + replica_resp2("10.0.0.2", "6379", "slave"), silent).empty());
  // A replica with only some fields (no flags): counted if it has an address.
  const auto partial = replicas_of("*1\r\n*4\r\n" + bulk("ip") + bulk("10.0.0.7") + bulk("port") + bulk("6379"));
  REQUIRE(partial.size() == 1);
  CHECK(partial[0] == at("10.0.0.7", 6379));
}

TEST_CASE("sentinel replies: a reset replicas reader forgets the last reply") {
  detail::sentinel_replicas_reader reader;
  reader.reset();
  feed(reader, "*1\r\n" + replica_resp2("10.0.0.2", "6379", "slave"));
  reader.finish({});
  CHECK(reader.replicas().size() == 1);
  reader.reset();
  CHECK(reader.replicas().empty());
  feed(reader, "*1\r\n" + replica_resp2("10.0.0.3", "6379", "s_down"));
  reader.finish({});
  CHECK(reader.replicas().empty());
}

std::string switch_of(std::string_view payload, std::string_view master = "mymaster") {
  detail::master_switch_news news;
  if (!detail::read_master_switch(payload, master, news)) return "ignored";
  return std::string(news.from_host) + ":" + std::string(news.from_port) + " -> " + news.to.host + ":" +
         std::to_string(news.to.port) + (news.to.numeric ? " numeric" : " named");
}

TEST_CASE("sentinel replies: a +switch-master announcement for the URL's master, and what is not one") {
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1 6380") == "127.0.0.1:6379 -> 127.0.0.1:6380 numeric");
  CHECK(switch_of("mymaster 10.0.0.1 6379 redis-2.example 6379") == "10.0.0.1:6379 -> redis-2.example:6379 named");
  CHECK(switch_of("other 127.0.0.1 6379 127.0.0.1 6380") == "ignored");
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1") == "ignored");
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1 0") == "ignored");
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1 70000") == "ignored");
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1 63x") == "ignored");
  CHECK(switch_of("") == "ignored");
  CHECK(switch_of("mymaster 127.0.0.1 6379 127.0.0.1 6380", "mymaster2") == "ignored");
}

}  // namespace sentinel_resolution_test
