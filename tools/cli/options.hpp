// Command-line parsing for the deadbolt CLI.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace deadbolt::cli {

enum class subcommand { run, status, unlock, help, version };

/// Which kind of lock `run` takes (one of --fenced, --fair, --read, --write, --semaphore N; default: a
/// reentrant lock).
enum class lock_mode { plain, fenced, fair, read, write, semaphore };

/// What `unlock --force` may release: a lock (default), a semaphore (--semaphore), a latch (--latch).
enum class unlock_kind { lock, semaphore, latch };

struct options {
  subcommand command = subcommand::help;
  std::string url;                                  ///< --url, else $REDIS_URL, else the default
  std::string name;                                 ///< the lock
  std::optional<std::chrono::milliseconds> wait;    ///< --wait: absent = forever
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
  std::vector<std::string> argv;                    ///< COMMAND and its arguments
};

/// Parses "500ms", "10s", "2m", "1h", or a bare number of seconds ("1.5" is 1500 ms).
std::optional<std::chrono::milliseconds> parse_duration(std::string_view text);

/// Parses argv; on failure returns nullopt and sets `error` to a one-line reason.
std::optional<options> parse_options(const std::vector<std::string>& args, std::string& error);

/// The usage text printed for --help and after a usage error.
std::string_view usage();

}  // namespace deadbolt::cli
