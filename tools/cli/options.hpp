// Command-line parsing for the deadbolt CLI (getopt_long).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "deadbolt/config.hpp"

namespace deadbolt::cli {

enum class subcommand { run, status, list, unlock, ping, help, version, acl };

/// Which kind of lock `run` takes (one of --fenced, --fair, --read, --write, --semaphore N, --spin; default:
/// a reentrant lock); `acl` also --latch.
enum class lock_mode { plain, fenced, fair, read, write, semaphore, spin, latch };

/// What `unlock --force` may release: a lock (default), a semaphore (--semaphore), a latch (--latch).
enum class unlock_kind { lock, semaphore, latch };

struct options {
  subcommand command = subcommand::help;
  std::optional<subcommand> help_for;               ///< help: `deadbolt run --help`, `deadbolt help run`

  // Global options (before or after the subcommand).
  std::string url;                                  ///< --url, else $REDIS_URL, else the default
  std::chrono::milliseconds connect_timeout{3000};  ///< --connect-timeout
  std::string password_file;                        ///< --password-file
  std::string tls_ca;                               ///< --tls-ca FILE|DIR
  std::string tls_cert;                             ///< --tls-cert FILE
  std::string tls_key;                              ///< --tls-key FILE
  std::string tls_server_name;                      ///< --tls-server-name NAME
  bool tls_insecure = false;                        ///< --tls-insecure: no certificate verification
  deadbolt::pubsub_mode cluster_pubsub = deadbolt::pubsub_mode::automatic;  ///< --cluster-pubsub
  deadbolt::replica_sync_mode replica_sync = deadbolt::replica_sync_mode::automatic;  ///< --replica-sync
  bool verbose = false;                             ///< -v, --verbose

  std::string name;                                 ///< the lock (list: the pattern, default "*")
  std::size_t limit = 1000;                         ///< list --limit: at most this many names
  std::optional<std::chrono::milliseconds> wait;    ///< -w/--wait (-n is 0): absent = forever
  int conflict_exit_code = 4;                       ///< -E: the exit code when the wait runs out
  std::chrono::milliseconds lease{0};               ///< --lease: 0 = watchdog
  std::optional<std::chrono::milliseconds> watchdog;  ///< --watchdog: the watchdog lease
  std::chrono::milliseconds grace{5000};            ///< --grace: TERM to KILL delay when the lease is lost
  lock_mode mode = lock_mode::plain;
  std::int64_t permits = 0;                         ///< --semaphore N
  bool json = false;
  bool force = false;
  unlock_kind releases = unlock_kind::lock;        ///< unlock: --semaphore, --latch
  std::string permit;                               ///< unlock --semaphore --permit ID
  bool quiet = false;
  bool nonblock = false;                            ///< -n: --wait 0
  bool dash_dash = false;                           ///< run: "--" was given
  std::vector<std::string> argv;                    ///< COMMAND and its arguments
  std::vector<std::string> names;                   ///< acl: every NAME (name is the first)
  std::string acl_user;                             ///< acl --user: else the URL's user, else "deadbolt"
  bool acl_add = false;                             ///< acl --add: the grants without the resets
};

/// Parses argv (argv[0] is the program); on failure returns nullopt and sets `error` to a one-line
/// reason and `failed_in` to the subcommand it concerns (for the "try 'deadbolt run --help'" hint).
std::optional<options> parse_options(int argc, char** argv, std::string& error, std::optional<subcommand>& failed_in);

/// The subcommand's name as typed ("run").
const char* name_of(subcommand s);

}  // namespace deadbolt::cli
