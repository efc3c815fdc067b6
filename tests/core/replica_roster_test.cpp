// Replica sync's roster (src/pipeline/replica_roster.hpp), without sockets: ROLE replies read by
// role_reader; a replica that leaves the master makes its acknowledgements worthless until it has
// been asked, one that answers "master" keeps them so, one that is listed again counts as before.
#include <doctest/doctest.h>

#include <string>
#include <string_view>
#include <vector>

#include "deadbolt/resp/decoder.hpp"
#include "pipeline/replica_roster.hpp"
#include "pipeline/role_reader.hpp"

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;

namespace replica_roster_test {  // named: the unit is built together with others (unity build)

constexpr std::int64_t second = 1'000'000'000;

std::string bulk(std::string_view s) { return "$" + std::to_string(s.size()) + "\r\n" + std::string(s) + "\r\n"; }

/// A master's ROLE reply listing `ports` on 127.0.0.1, in RESP.
std::string master_listing(const std::vector<int>& ports) {
  std::string out = "*3\r\n" + bulk("master") + ":100\r\n*" + std::to_string(ports.size()) + "\r\n";
  for (int port : ports) out += "*3\r\n" + bulk("127.0.0.1") + bulk(std::to_string(port)) + bulk("100");
  return out;
}

/// Reads one reply into a role_reader, as the pipeline routes it.
detail::role_reader read(std::string_view bytes) {
  detail::role_reader role;
  resp::decoder decoder;
  for (;;) {
    const resp::parse_result r = decoder.next(bytes);
    REQUIRE(r.what == resp::parse_result::kind::node);
    role.take(r.node);
    bytes.remove_prefix(r.consumed);
    if (r.end_of_reply) break;
  }
  CHECK(bytes.empty());
  return role;
}

void list(detail::replica_roster& roster, const std::vector<int>& ports) { roster.listed(read(master_listing(ports))); }

TEST_CASE("role_reader: a master's replicas and where they listen; other roles list none") {
  const auto master = read(master_listing({6380, 6381}));
  CHECK(master.master());
  CHECK(master.replicas() == 2);
  REQUIRE(master.listed_count() == 2);
  CHECK(master.listed(0).host == "127.0.0.1");
  CHECK(master.listed(0).port == 6380);
  CHECK(master.listed(1).port == 6381);

  const auto replica = read("*5\r\n" + bulk("slave") + bulk("127.0.0.1") + ":6379\r\n" + bulk("connected") + ":10\r\n");
  CHECK_FALSE(replica.master());
  CHECK(replica.listed_count() == 0);
  const auto sentinel = read("*2\r\n" + bulk("sentinel") + "*1\r\n" + bulk("mymaster"));
  CHECK_FALSE(sentinel.master());
  CHECK(sentinel.listed_count() == 0);
  const auto refused = read("-NOPERM no\r\n");
  CHECK(refused.error());

  // Not an address (a port that is no number): listed, but with port 0.
  const auto odd = read("*3\r\n" + bulk("master") + ":1\r\n*1\r\n*3\r\n" + bulk("h") + bulk("x") + bulk("1"));
  REQUIRE(odd.listed_count() == 1);
  CHECK(odd.listed(0).port == 0);
  // More replicas than it keeps: counted, the first max_listed read.
  std::vector<int> many;
  for (int i = 0; i < 10; ++i) many.push_back(7000 + i);
  const auto crowd = read(master_listing(many));
  CHECK(crowd.replicas() == 10);
  CHECK(crowd.listed_count() == detail::role_reader::max_listed);
}

TEST_CASE("replica_roster: a replica that left is asked; until it answers the master is not trusted; not a master: forgotten") {
  detail::replica_roster roster;
  CHECK_FALSE(roster.tracking());
  CHECK(roster.trusted());
  list(roster, {6380, 6381});
  CHECK(roster.tracking());
  CHECK(roster.trusted());
  CHECK(roster.ask_due(0) == nullptr);

  list(roster, {6381});  // 6380 left (stopped, restarted, cut off, or promoted)
  CHECK_FALSE(roster.trusted());
  const auto* asked = roster.ask_due(5 * second);
  REQUIRE(asked != nullptr);
  CHECK(asked->port == 6380);
  CHECK(roster.ask_due(5 * second) == nullptr);  // asked already
  CHECK_FALSE(roster.trusted());                 // no answer yet
  roster.answered("127.0.0.1", 6381, false, 5 * second);  // not the one asked: ignored
  CHECK_FALSE(roster.trusted());
  roster.answered("127.0.0.1", 6380, false, 5 * second);  // a replica again, or unreachable
  CHECK(roster.trusted());
  list(roster, {6381});
  CHECK(roster.trusted());  // forgotten: its absence is news no more
  list(roster, {6381, 6380});  // back: a replica like any other
  CHECK(roster.trusted());
}

TEST_CASE("replica_roster: a replica that answers master keeps the master untrusted, is asked again, and counts again once listed") {
  detail::replica_roster roster;
  list(roster, {6380, 6381});
  list(roster, {6381});
  REQUIRE(roster.ask_due(0) != nullptr);
  roster.answered("127.0.0.1", 6380, true, 2 * second);  // promoted: a failover under way
  CHECK_FALSE(roster.trusted());
  list(roster, {6381});  // the other replica still follows: its acknowledgements count for nothing
  CHECK_FALSE(roster.trusted());
  list(roster, {});  // moved to the new master too
  CHECK_FALSE(roster.trusted());
  const auto* left = roster.ask_due(2 * second);
  REQUIRE(left != nullptr);
  CHECK(left->port == 6381);
  roster.answered("127.0.0.1", 6381, false, 2 * second);  // a replica of the new master: forgotten
  CHECK_FALSE(roster.trusted());  // the promoted one still counts
  CHECK(roster.ask_due(2 * second + detail::replica_roster::recheck_ns - 1) == nullptr);
  const auto* again = roster.ask_due(2 * second + detail::replica_roster::recheck_ns);
  REQUIRE(again != nullptr);
  CHECK(again->port == 6380);
  roster.answered("127.0.0.1", 6380, true, 3 * second);
  CHECK_FALSE(roster.trusted());
  list(roster, {6380});  // an aborted failover: a replica of this master again
  CHECK(roster.trusted());
}

TEST_CASE("replica_roster: a server that answers another role is not trusted; an error tells nothing; another server starts afresh") {
  detail::replica_roster roster;
  list(roster, {6380});
  roster.listed(read("-NOPERM no\r\n"));
  CHECK(roster.trusted());
  roster.listed(read("*5\r\n" + bulk("slave") + bulk("127.0.0.1") + ":6379\r\n" + bulk("connected") + ":10\r\n"));
  CHECK_FALSE(roster.trusted());  // demoted: what it acknowledged is no master's
  list(roster, {6380});
  CHECK(roster.trusted());
  list(roster, {});
  CHECK_FALSE(roster.trusted());
  roster.clear();  // the connection moved to another server
  CHECK(roster.trusted());
  CHECK_FALSE(roster.tracking());
  list(roster, {7000});
  CHECK(roster.trusted());
}

TEST_CASE("replica_roster: more replicas than it holds: the first ones are followed, the others not") {
  detail::replica_roster roster;
  std::vector<int> ports;
  for (int i = 0; i < 10; ++i) ports.push_back(7000 + i);
  list(roster, ports);
  ports.pop_back();  // one it never held leaves: nothing to ask
  list(roster, ports);
  CHECK(roster.trusted());
  ports.erase(ports.begin());  // one it holds leaves
  list(roster, ports);
  CHECK_FALSE(roster.trusted());
  const auto* asked = roster.ask_due(0);
  REQUIRE(asked != nullptr);
  CHECK(asked->port == 7000);
}

TEST_CASE("replica_roster: replicas named elsewhere (the sentinels) are expected in the master's list") {
  detail::replica_roster roster;
  std::vector<detail::server_address> named(2);
  named[0].host = named[1].host = "127.0.0.1";
  named[0].port = 6380;
  named[1].port = 6381;
  roster.expect(named);
  CHECK(roster.trusted());
  list(roster, {6381});  // a new connection to the old master, just after 6380 was promoted
  CHECK_FALSE(roster.trusted());
  const auto* asked = roster.ask_due(0);
  REQUIRE(asked != nullptr);
  CHECK(asked->port == 6380);
  roster.answered("127.0.0.1", 6380, false, 0);  // not a master (restarting, say): forgotten
  CHECK(roster.trusted());
  roster.expect(named);  // named again at the next login, and listed: nothing to ask
  list(roster, {6380, 6381});
  CHECK(roster.trusted());
}

TEST_CASE("replica_roster: a replica named after the master's listing was read (a cluster's layout) is asked at once") {
  detail::replica_roster roster;
  list(roster, {});  // a seed's login: its ROLE lists no replica (the one it had was just promoted)
  CHECK(roster.trusted());
  CHECK(roster.ask_due(0) == nullptr);
  std::vector<detail::server_address> named(1);
  named[0].host = "127.0.0.1";
  named[0].port = 7003;
  roster.expect(named);  // then the layout, read on that connection, names it as the master's replica
  CHECK_FALSE(roster.trusted());
  const auto* asked = roster.ask_due(0);
  REQUIRE(asked != nullptr);
  CHECK(asked->port == 7003);
  CHECK(asked->expected_only);
  roster.answered("127.0.0.1", 7003, true, 0);  // a master now: promoted
  CHECK_FALSE(roster.trusted());
  roster.expect(named);  // the next layout names it again: nothing changes
  CHECK(roster.ask_due(second / 2) == nullptr);
  list(roster, {7003});  // listed by the master again (the failover was aborted): it counts
  CHECK(roster.trusted());
  roster.expect(named);  // and named once more while listed: nothing to ask
  CHECK(roster.trusted());
}

TEST_CASE("promoted_from: a replica promoted from this master continued its history; this master's own predecessor did not") {
  const auto info = [](const char* role, const char* replid, const char* replid2) {
    return detail::parse_replication_info(std::string("# Replication\r\nrole:") + role +
                                          "\r\nconnected_slaves:0\r\nmaster_replid:" + replid +
                                          "\r\nmaster_replid2:" + replid2 + "\r\nmaster_repl_offset:10\r\n");
  };
  const auto old_master = info("master", "aaaa", "0000");
  CHECK(old_master.answered);
  CHECK(old_master.master);
  CHECK(old_master.replid == "aaaa");
  CHECK(old_master.replid2 == "0000");
  const auto promoted = info("master", "bbbb", "aaaa");  // REPLICAOF NO ONE keeps the old history second
  // On the old master, in a failover's first second: the replica that left it was promoted from it.
  CHECK(detail::promoted_from(promoted, old_master));
  // On the new master, just after the switch: the old master, not demoted yet, is a master, but the
  // new one continued its history, not the reverse: no failover away from here.
  CHECK_FALSE(detail::promoted_from(old_master, promoted));
  CHECK_FALSE(detail::promoted_from(info("slave", "bbbb", "aaaa"), old_master));  // a replica again
  CHECK_FALSE(detail::promoted_from(detail::replication_info{}, old_master));    // no answer (an ACL)
  CHECK_FALSE(detail::promoted_from(promoted, detail::replication_info{}));
}

}  // namespace replica_roster_test
