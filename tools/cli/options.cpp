#include "options.hpp"

#include <cmath>
#include <cstdlib>

namespace deadbolt::cli {

std::string_view usage() {
  return R"(usage:
  deadbolt run [options] NAME -- COMMAND [ARGS...]
      Wait for the lock NAME, run COMMAND while holding it, release it when COMMAND exits.
      --wait DURATION      give up after waiting this long (exit 4); default: wait forever
      --lease DURATION     hold for a fixed lease instead of the watchdog (COMMAND is stopped
                           when the lease runs out)
      --watchdog DURATION  the watchdog lease (default 30s), renewed every third of it
      --grace DURATION     after a lost lease, SIGTERM then SIGKILL this much later (default 5s)
      --fenced             take a fenced lock; COMMAND gets DEADBOLT_FENCING_TOKEN
      --fair               take a fair lock: waiters are served in arrival order
      --read, --write      take the read (shared) or write (exclusive) half of a read/write lock
      --semaphore N        take one permit of a permit-expirable semaphore with N permits (created
                           if absent); COMMAND gets DEADBOLT_PERMIT_ID
      --quiet              no status line while waiting
  deadbolt status [--json] NAME
      Show who holds NAME, hold counts, TTL, mode, queued waiters and the fencing token.
  deadbolt unlock --force [--semaphore [--permit ID] | --latch] NAME
      Release the lock NAME whoever holds it, and wake a waiter. Only a key with a lock's shape is
      touched; anything else is refused. --semaphore: take back a permit-expirable semaphore's
      expired permits, or release permit ID; --latch: delete the count-down latch (waiters go on).

common options:
  --url URL    redis://[user[:password]@]host[:port][/db] or unix:///path
               (default: $REDIS_URL, else redis://127.0.0.1:6379)
  -h, --help   this text;  --version  the version

durations: 500ms, 10s, 2m, 1h, or plain seconds (1.5)
exit codes: COMMAND's own status; 2 usage; 3 cannot connect; 4 wait timed out; 5 lease lost
)";
}

std::optional<std::chrono::milliseconds> parse_duration(std::string_view text) {
  if (text.empty()) return std::nullopt;
  std::size_t digits = 0;
  while (digits < text.size() && ((text[digits] >= '0' && text[digits] <= '9') || text[digits] == '.')) ++digits;
  if (digits == 0) return std::nullopt;
  const std::string number(text.substr(0, digits));
  char* end = nullptr;
  const double value = std::strtod(number.c_str(), &end);
  if (end != number.c_str() + number.size() || !std::isfinite(value) || value < 0) return std::nullopt;
  const std::string_view unit = text.substr(digits);
  double ms;
  if (unit == "ms") ms = value;
  else if (unit == "s" || unit.empty()) ms = value * 1000;
  else if (unit == "m") ms = value * 60'000;
  else if (unit == "h") ms = value * 3'600'000;
  else return std::nullopt;
  if (ms > 1e15) return std::nullopt;
  return std::chrono::milliseconds(static_cast<std::int64_t>(std::llround(ms)));
}

std::optional<options> parse_options(const std::vector<std::string>& args, std::string& error) {
  options o;
  if (args.empty()) {
    error = "no subcommand";
    return std::nullopt;
  }
  const std::string& sub = args[0];
  if (sub == "run") o.command = subcommand::run;
  else if (sub == "status") o.command = subcommand::status;
  else if (sub == "unlock") o.command = subcommand::unlock;
  else if (sub == "-h" || sub == "--help" || sub == "help") { o.command = subcommand::help; return o; }
  else if (sub == "--version" || sub == "version") { o.command = subcommand::version; return o; }
  else {
    error = "unknown subcommand '" + sub + "'";
    return std::nullopt;
  }

  std::vector<std::string> positional;
  std::size_t i = 1;
  auto value_of = [&](const std::string& flag) -> std::optional<std::string> {
    if (i + 1 >= args.size()) {
      error = flag + " needs a value";
      return std::nullopt;
    }
    return args[++i];
  };
  auto duration_of = [&](const std::string& flag) -> std::optional<std::chrono::milliseconds> {
    auto text = value_of(flag);
    if (!text) return std::nullopt;
    auto d = parse_duration(*text);
    if (!d) error = flag + ": '" + *text + "' is not a duration (like 500ms, 10s, 2m)";
    return d;
  };
  for (; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") {
      o.argv.assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      break;
    }
    if (a == "-h" || a == "--help") { o.command = subcommand::help; return o; }
    if (a == "--url") {
      auto v = value_of(a);
      if (!v) return std::nullopt;
      o.url = *v;
    } else if (a == "--wait" || a == "--lease" || a == "--watchdog" || a == "--grace") {
      if (o.command != subcommand::run) {
        error = a + " is an option of 'run'";
        return std::nullopt;
      }
      auto d = duration_of(a);
      if (!d) return std::nullopt;
      if (a == "--wait") o.wait = *d;
      else if (a == "--lease") o.lease = *d;
      else if (a == "--watchdog") o.watchdog = *d;
      else o.grace = *d;
    } else if ((a == "--fenced" || a == "--fair" || a == "--read" || a == "--write") && o.command == subcommand::run) {
      const lock_mode m = a == "--fenced" ? lock_mode::fenced
                          : a == "--fair" ? lock_mode::fair
                          : a == "--read" ? lock_mode::read
                                          : lock_mode::write;
      if (o.mode != lock_mode::plain && o.mode != m) {
        error = "--fenced, --fair, --read, --write and --semaphore exclude each other";
        return std::nullopt;
      }
      o.mode = m;
    } else if (a == "--semaphore" && o.command == subcommand::run) {
      auto v = value_of(a);
      if (!v) return std::nullopt;
      char* end = nullptr;
      const long long n = std::strtoll(v->c_str(), &end, 10);
      if (v->empty() || *end != '\0' || n < 1 || n > 1'000'000'000) {
        error = "--semaphore: '" + *v + "' is not a number of permits (1 or more)";
        return std::nullopt;
      }
      if (o.mode != lock_mode::plain) {
        error = "--fenced, --fair, --read, --write and --semaphore exclude each other";
        return std::nullopt;
      }
      o.mode = lock_mode::semaphore;
      o.permits = n;
    } else if (a == "--quiet" && o.command == subcommand::run) {
      o.quiet = true;
    } else if (a == "--json" && o.command == subcommand::status) {
      o.json = true;
    } else if (a == "--force" && o.command == subcommand::unlock) {
      o.force = true;
    } else if ((a == "--semaphore" || a == "--latch") && o.command == subcommand::unlock) {
      const unlock_kind k = a == "--latch" ? unlock_kind::latch : unlock_kind::semaphore;
      if (o.releases != unlock_kind::lock && o.releases != k) {
        error = "--semaphore and --latch exclude each other";
        return std::nullopt;
      }
      o.releases = k;
    } else if (a == "--permit" && o.command == subcommand::unlock) {
      auto v = value_of(a);
      if (!v) return std::nullopt;
      o.permit = *v;
    } else if (a.size() > 1 && a[0] == '-') {
      error = "unknown option '" + a + "' for '" + sub + "'";
      return std::nullopt;
    } else {
      positional.push_back(a);
    }
  }
  if (positional.size() != 1) {
    error = positional.empty() ? "missing lock NAME" : "expected one lock NAME, got '" + positional[1] + "' too";
    return std::nullopt;
  }
  o.name = positional[0];
  if (o.command == subcommand::run && o.argv.empty()) {
    error = "missing COMMAND after --";
    return std::nullopt;
  }
  if (o.command == subcommand::run && o.lease.count() > 0 && o.watchdog) {
    error = "--lease and --watchdog exclude each other";
    return std::nullopt;
  }
  if (o.command == subcommand::unlock && !o.force) {
    error = "unlock needs --force (it releases the lock whoever holds it)";
    return std::nullopt;
  }
  if (o.command == subcommand::unlock && !o.permit.empty() && o.releases != unlock_kind::semaphore) {
    error = "--permit goes with --semaphore";
    return std::nullopt;
  }
  if (o.url.empty()) {
    const char* env = std::getenv("REDIS_URL");
    o.url = env != nullptr && *env != '\0' ? env : "redis://127.0.0.1:6379";
  }
  return o;
}

}  // namespace deadbolt::cli
