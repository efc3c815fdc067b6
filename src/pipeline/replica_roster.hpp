// Replica sync: which replicas the connection's master listed (ROLE), and what became of each one that
// left it, so that a WAIT acknowledged on a master that is being replaced is not trusted.
//
// A replica leaves its master's list when it stops, restarts or is cut off, and also when it is
// promoted: the first step of a failover (Sentinel's, planned or not: REPLICAOF NO ONE to the chosen
// replica). The old master goes on taking writes until it is demoted (a planned Sentinel failover:
// about 10 s), and its other replicas follow it until Sentinel moves them (about a second later), so
// a `WAIT 1` there is still acknowledged, by a replica whose copy the new master never gets: a hold
// written then is not on the new master, and a client that has moved there grants the lock again
// (issue 27: two holders at once). What tells the two cases apart is the replica itself: a promoted one
// answers ROLE with "master". So while a replica that left has not been asked, or answered that it is
// a master, acknowledgements on this connection count for nothing (replica_sync: the write is not
// synced); once it answers anything else, or cannot be reached (a stopped replica takes no writes
// from anyone), it is forgotten. A promoted replica is asked again now and then (recheck_ns): it may be
// made a replica again (an aborted failover); listed by the master again, it counts as before.
//
// Known by address (as the master lists it), for the first `capacity` replicas; kept across the
// connection's reconnects to the same server, cleared for another one (the connection says). Under
// Sentinel the replicas the sentinel named with the master are expected too (expect()), and on a
// Cluster those the layout names, so that a new connection to the old master in a failover's first
// second, which never saw the promoted replica listed, misses it all the same. No I/O,
// no clock: the connection asks the replicas and passes the time. Tested without sockets
// (tests/core/replica_roster_test.cpp).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "base/server_address.hpp"
#include "pipeline/role_reader.hpp"

namespace deadbolt::detail {

/// What INFO replication says of a server's role and replication history.
struct replication_info {
  bool answered = false;  // an INFO replication text was read
  bool master = false;
  std::string replid;     // master_replid: the history it serves now
  std::string replid2;    // master_replid2: the history it continued when it was promoted
};
/// Reads INFO replication's text ("role:master\r\nmaster_replid:...\r\n...").
replication_info parse_replication_info(std::string_view text);
/// Whether `other` is a master promoted from `ours`' history: it continued the history this master
/// serves now (REPLICAOF NO ONE keeps the old one as master_replid2). The old master of a failover
/// that is not demoted yet is a master too, but the new one continued *its* history, not the reverse.
bool promoted_from(const replication_info& other, const replication_info& ours) noexcept;

class replica_roster {
 public:
  static constexpr std::size_t capacity = role_reader::max_listed;
  /// A replica that answered "master" is asked again at most this often (while writes come).
  static constexpr std::int64_t recheck_ns = 1'000'000'000;

  enum class standing : std::uint8_t {
    listed,    ///< the master lists it
    left,      ///< the master no longer lists it; not asked yet
    asking,    ///< the master no longer lists it; asked, no answer yet
    promoted,  ///< the master no longer lists it, and it answered ROLE as a master
  };
  struct member {
    std::string host;
    std::uint16_t port = 0;
    standing state = standing::listed;
    bool used = false;
    /// Known only as expected (expect()), never listed by this master: a master there may be this
    /// master's own predecessor, not yet demoted, rather than a replica promoted from it; asked how
    /// its history relates to this master's (promoted_from()).
    bool expected_only = false;
    std::int64_t asked_ns = 0;  // promoted: when it last answered
  };

  /// Another server: nothing is known of its replicas.
  void clear() noexcept;
  /// Replicas the server should have, from elsewhere (the sentinels that named it): followed as if
  /// the server had listed them, so that the next listing without one of them makes it ask. A
  /// connection made in a failover's first second knows the replica just promoted only this way.
  /// One expected after the server's listing was read, which did not name it, is asked at once.
  void expect(const std::vector<server_address>& replicas);
  /// ROLE answered on this connection's server (at login, before or after a WAIT). An error reply
  /// tells nothing; a role other than master makes every acknowledgement worthless until a master's
  /// listing comes.
  void listed(const role_reader& role);
  /// Whether a WAIT's acknowledgements count: the server answered ROLE as a master, and no replica
  /// that left it is (or may be) a master now.
  bool trusted() const noexcept { return trusted_; }
  /// A master's listing was read: ROLE after a WAIT tells something (a server whose ROLE was refused
  /// is never tracked).
  bool tracking() const noexcept { return tracking_; }
  /// A replica to ask now (it becomes `asking`): one that left and was not asked yet, or a promoted
  /// one last asked recheck_ns ago or more. Null when none is due.
  const member* ask_due(std::int64_t now_ns) noexcept;
  /// What `host:port` answered: a master, or not (a replica, an error, no answer at all). Ignored
  /// unless it is being asked (it may have been listed again meanwhile).
  void answered(std::string_view host, std::uint16_t port, bool master, std::int64_t now_ns) noexcept;
  /// The replicas known, for log lines and tests.
  const std::array<member, capacity>& members() const noexcept { return members_; }

 private:
  member* find(std::string_view host, std::uint16_t port) noexcept;
  void judge() noexcept;  // sets trusted_ from the members (after every change)

  std::array<member, capacity> members_{};
  bool tracking_ = false;
  bool not_master_ = false;  // the server's last ROLE named another role
  bool trusted_ = true;      // kept, so that the fast path asks one flag
};

}  // namespace deadbolt::detail
