#include "usage.hpp"

namespace deadbolt::cli {
namespace {

constexpr std::string_view run_text = R"(usage: deadbolt run [options] NAME -- COMMAND [ARGS...]
  Wait for the lock NAME, run COMMAND while holding it, release it when COMMAND and every process
  it started have ended; exit with COMMAND's status. Nothing of COMMAND's tree outlives the lock:
  what it leaves behind, a lost lease or deadbolt's own death stop the whole tree.
  -w, --wait DURATION      give up after this long, connecting included (exit 4, see -E);
                           default: wait as long as it takes
  -n, --nonblock           do not wait: one attempt (--wait 0)
  -E, --conflict-exit-code N  the exit code when the lock is not had in time (default 4)
      --lease DURATION     hold for a fixed lease instead of the watchdog (COMMAND is stopped
                           before the lease runs out: see --grace)
      --watchdog DURATION  the watchdog lease (default 30s, at least 30ms), renewed every third
      --grace DURATION     COMMAND's tree gets SIGTERM this long before the lock's deadline (the
                           last confirmed acquire or renewal's send + the lease - 1% - 2ms) and
                           SIGKILL at it, before the server can expire the lock (exit 5); also
                           SIGTERM to SIGKILL for what COMMAND leaves behind and after a lock taken
                           away (default 5s; at most a third of the watchdog lease, half a --lease)
      --fenced             a fenced lock; COMMAND gets DEADBOLT_FENCING_TOKEN
      --fair               a fair lock: waiters are served in arrival order
      --read, --write      the read (shared) or write (exclusive) half of a read/write lock
      --semaphore N        one permit of a permit-expirable semaphore of N permits (created if
                           absent; an error if it has another number); COMMAND gets DEADBOLT_PERMIT_ID
      --spin               a spin lock: no pub/sub (waiters retry with a backoff), for endpoints
                           where SUBSCRIBE or PUBLISH cannot be used
  -q, --quiet              no status line while waiting
)";

constexpr std::string_view status_text = R"(usage: deadbolt status [--json] NAME
  Show what NAME is (lock, fenced/fair/read-write lock, semaphore, latch), who holds it (host, pid,
  command when the holder is deadbolt), hold counts, TTL, queued waiters and the fencing token.
      --json               one JSON object (invalid UTF-8 shown as U+FFFD, plus "name_hex")
  Exits 0 if NAME is held (a holder, or a permit out), 1 if not, as a test for scripts.
)";

constexpr std::string_view list_text = R"(usage: deadbolt list [--json] [--limit N] [PATTERN]
  The locks, semaphores and latches whose names match PATTERN (Redis's glob: *, ?, [abc]; default
  *), one line each: kind, state, TTL, first holder. Found with SCAN (every master of a cluster).
      --json               one JSON array of status's objects
      --limit N            look at N names at most (default 1000); more is said on stderr
)";

constexpr std::string_view unlock_text = R"(usage: deadbolt unlock --force [--spin | --semaphore [--permit ID] | --latch] NAME
  Release the lock NAME whoever holds it, and wake a waiter; a fair lock's queue is cleared (its
  live waiters queue again). Only a key with a lock's shape is touched; anything else is refused.
  -f, --force              required: it releases a lock someone else holds
      --spin               a spin lock: delete it and publish nothing (its waiters retry by themselves)
      --semaphore          take back a permit-expirable semaphore's expired permits, or with
      --permit ID          release that permit (a holder's DEADBOLT_PERMIT_ID)
      --latch              delete the count-down latch NAME (its waiters go on)
)";

constexpr std::string_view ping_text = R"(usage: deadbolt ping [--json]
  Check that the server answers (connect, log in, PING): exit 0 if it does, 3 if not.
      --json               one JSON object: reply, server, round_trip_us
)";

constexpr std::string_view acl_text = R"(usage: deadbolt acl [--user USER] [--add] [KIND] NAME...
  Print the Redis ACL rule (one ACL SETUSER line, as redis-cli reads it from its input) that lets USER
  do with the locks NAME... what deadbolt run, status and unlock --force do, and nothing more: the
  commands, keys and channels of that kind. Nothing is sent. --url says the topology (a cluster's
  commands; a database's SELECT) and --cluster-pubsub its pub/sub. KIND is one of:
      --fenced, --fair, --read/--write (a read/write lock), --semaphore N, --spin, --latch
                           (default: a reentrant lock)
      --user USER          the user (default: the URL's user, else deadbolt); a new user needs
                           'on' and a password too: ACL SETUSER USER on >PASSWORD
      --add                only the grants, without resetting the user's rule first: to give a
                           user a second kind (ACL SETUSER adds to what it has)
)";

constexpr std::string_view global_text = R"(options of every subcommand (before or after it):
      --url URL            redis://[user[:password]@]host[:port][/db] or unix:///path[?db=N];
                           rediss://... over TLS; valkey://, valkeys://... are the same URLs
                           (default: $REDIS_URL, else redis://127.0.0.1:6379)
      --password-file FILE the password, from FILE (else $DEADBOLT_PASSWORD, else the URL's)
      --tls-ca FILE|DIR    rediss://: the CA certificates to trust (default: the system's)
      --tls-cert FILE      rediss://: the client certificate (mutual TLS), with --tls-key
      --tls-key FILE       rediss://: the client certificate's private key
      --tls-server-name NAME  rediss://: the name the server's certificate must carry (default: the host)
      --tls-insecure       rediss://: accept any server certificate (no verification: tests only)
      --cluster-pubsub auto|sharded|classic  redis+cluster://: how waiters hear unlocks; the same as
                           the other clients of the lock (Redisson's shardedSubscriptionMode; default auto)
      --replica-sync auto|on|off  WAIT for a replica after each lock write: where the master has
                           replicas (auto, the default), always (on), never (off)
      --connect-timeout DURATION  give up connecting after this long (default 3s)
  -v, --verbose            timestamped progress on stderr (connect, wait, acquire, lease, release),
                           and the client's own events (reconnects, failovers, cluster layouts)
  -h, --help               help (deadbolt SUBCOMMAND --help: that subcommand's)
  -V, --version            the version

durations: 500ms, 10s, 2m, 1h, combined (1m30s), or plain seconds (1.5)

exit codes (every subcommand):
  0    success (run: COMMAND's own status, 128+N if signal N ended it)
  1    another error (printed); status: NAME is not held
  2    bad arguments, URL or password file
  3    cannot connect, or the server refused the login
  4    run: the lock was not had in time (-w, -n); -E changes it
  5    run: the lock was lost, or its deadline came near, while COMMAND ran (COMMAND was stopped)
  6    run: the server refused the release (the lock may stay held until its lease ends)
  126  run: COMMAND cannot be run;  127: there is no such COMMAND
)";

constexpr std::string_view full_text = R"(usage: deadbolt [options] SUBCOMMAND [options] ...
  deadbolt run [options] NAME -- COMMAND [ARGS...]   run COMMAND holding the lock NAME
  deadbolt status [--json] NAME                      who holds NAME, and how (exit 0: held, 1: not)
  deadbolt list [--json] [PATTERN]                   the locks, semaphores and latches matching PATTERN
  deadbolt unlock --force [...] NAME                 release NAME whoever holds it
  deadbolt ping [--json]                             is the server there?
  deadbolt acl [KIND] NAME...                        the least-privilege ACL rule for NAME
  deadbolt help [SUBCOMMAND]                         this text, or a subcommand's

)";

std::string build(std::string_view head) {
  std::string s(head);
  s += '\n';
  s += global_text;
  return s;
}

}  // namespace

std::string_view usage(std::optional<subcommand> s) {
  static const std::string full = build(std::string(full_text) + std::string(run_text) + "\n" + std::string(status_text) +
                                        "\n" + std::string(list_text) + "\n" + std::string(unlock_text) + "\n" +
                                        std::string(ping_text) + "\n" + std::string(acl_text));
  static const std::string run = build(run_text), status = build(status_text), list = build(list_text),
                           unlock = build(unlock_text), ping = build(ping_text), acl = build(acl_text);
  if (!s) return full;
  switch (*s) {
    case subcommand::run: return run;
    case subcommand::status: return status;
    case subcommand::list: return list;
    case subcommand::unlock: return unlock;
    case subcommand::ping: return ping;
    case subcommand::acl: return acl;
    default: return full;
  }
}

}  // namespace deadbolt::cli
