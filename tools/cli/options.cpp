#include "options.hpp"

#include <getopt.h>

#include <charconv>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "duration.hpp"

namespace deadbolt::cli {
namespace {

enum option_code : int {
  opt_url = 256, opt_connect_timeout, opt_password_file, opt_lease, opt_watchdog, opt_grace, opt_fenced,
  opt_fair, opt_read, opt_write, opt_semaphore_n, opt_semaphore, opt_latch, opt_permit, opt_json, opt_limit,
  opt_tls_ca, opt_tls_cert, opt_tls_key, opt_tls_server_name, opt_tls_insecure, opt_cluster_pubsub,
  opt_spin, opt_user, opt_add,
  opt_replica_sync,
};

constexpr unsigned bit(subcommand s) { return 1u << static_cast<unsigned>(s); }
constexpr unsigned everywhere = ~0u;
constexpr unsigned on_run = bit(subcommand::run);
constexpr unsigned on_acl = bit(subcommand::acl);
constexpr unsigned globals = bit(subcommand::help);  // only the options every subcommand takes

struct option_spec {
  const char* name;
  int has_arg;
  int code;          // the short option's letter, or an option_code
  unsigned where;    // the subcommands that take it
};

constexpr option_spec all_options[] = {
    {"help", no_argument, 'h', everywhere},
    {"version", no_argument, 'V', everywhere},
    {"verbose", no_argument, 'v', everywhere},
    {"url", required_argument, opt_url, everywhere},
    {"connect-timeout", required_argument, opt_connect_timeout, everywhere},
    {"password-file", required_argument, opt_password_file, everywhere},
    {"tls-ca", required_argument, opt_tls_ca, everywhere},
    {"tls-cert", required_argument, opt_tls_cert, everywhere},
    {"tls-key", required_argument, opt_tls_key, everywhere},
    {"tls-server-name", required_argument, opt_tls_server_name, everywhere},
    {"tls-insecure", no_argument, opt_tls_insecure, everywhere},
    {"cluster-pubsub", required_argument, opt_cluster_pubsub, everywhere},
    {"replica-sync", required_argument, opt_replica_sync, everywhere},
    {"wait", required_argument, 'w', on_run},
    {"nonblock", no_argument, 'n', on_run},
    {"conflict-exit-code", required_argument, 'E', on_run},
    {"lease", required_argument, opt_lease, on_run},
    {"watchdog", required_argument, opt_watchdog, on_run},
    {"grace", required_argument, opt_grace, on_run},
    {"fenced", no_argument, opt_fenced, on_run | on_acl},
    {"fair", no_argument, opt_fair, on_run | on_acl},
    {"read", no_argument, opt_read, on_run | on_acl},
    {"write", no_argument, opt_write, on_run | on_acl},
    {"semaphore", required_argument, opt_semaphore_n, on_run | on_acl},
    {"spin", no_argument, opt_spin, on_run | on_acl | bit(subcommand::unlock)},
    {"quiet", no_argument, 'q', on_run},
    {"json", no_argument, opt_json, bit(subcommand::status) | bit(subcommand::list) | bit(subcommand::ping)},
    {"limit", required_argument, opt_limit, bit(subcommand::list)},
    {"force", no_argument, 'f', bit(subcommand::unlock)},
    {"semaphore", no_argument, opt_semaphore, bit(subcommand::unlock)},
    {"latch", no_argument, opt_latch, bit(subcommand::unlock) | on_acl},
    {"user", required_argument, opt_user, on_acl},
    {"add", no_argument, opt_add, on_acl},
    {"permit", required_argument, opt_permit, bit(subcommand::unlock)},
};

// getopt_long's tables for the options `where` takes: the long ones and the short optstring.
struct option_table {
  std::vector<::option> longs;
  std::string shorts = ":";  // ':' first: a missing value is reported as ':', quietly
  explicit option_table(unsigned where, bool stop_at_first_word) {
    if (stop_at_first_word) shorts = "+:";
    for (const auto& o : all_options) {
      if ((o.where & where) == 0) continue;
      longs.push_back({o.name, o.has_arg, nullptr, o.code});
      if (o.code < 256) {
        shorts += static_cast<char>(o.code);
        if (o.has_arg == required_argument) shorts += ':';
      }
    }
    longs.push_back({nullptr, 0, nullptr, 0});
  }
};

// The option `word` ("--wait", "--wait=1s", "-w") names among those `where` takes.
const option_spec* find_option(std::string_view word, unsigned where) {
  for (const auto& o : all_options) {
    if ((o.where & where) == 0) continue;
    if (word.substr(0, 2) == "--" ? word.substr(2, word.find('=') - 2) == o.name
                                  : word.size() == 2 && word[0] == '-' && o.code == word[1]) {
      return &o;
    }
  }
  return nullptr;
}

const char* owner_of(const option_spec& o) {
  for (subcommand s : {subcommand::run, subcommand::status, subcommand::list, subcommand::unlock, subcommand::acl}) {
    if ((o.where & bit(s)) != 0) return name_of(s);
  }
  return "deadbolt";
}

// Why getopt_long refused an option ('?': unknown or misused, ':': no value). `word` is the word it
// was in, `bad_short` the short option's letter; `here` the options of subcommand `sub`.
std::string refused(int result, int bad_short, const char* word, unsigned here, const char* sub) {
  const std::string w = word != nullptr ? word : "";
  const bool is_long = w.substr(0, 2) == "--";
  const std::string shown = is_long ? w.substr(0, w.find('=')) : "-" + std::string(1, static_cast<char>(bad_short));
  if (result == ':') return shown + " needs a value";
  if (find_option(shown, here) != nullptr) return shown + " takes no value";  // "--json=1"
  if (const option_spec* elsewhere = find_option(shown, everywhere)) {
    return shown + " is an option of '" + owner_of(*elsewhere) + "', not of '" + sub + "'";
  }
  return "unknown option '" + shown + "'" + (is_long ? " (or an ambiguous abbreviation)" : "");
}

std::string word_of(const char* arg) { return arg != nullptr ? std::string(arg) : std::string(); }

std::optional<std::chrono::milliseconds> duration_value(const char* flag, const char* text, std::string& error) {
  auto d = parse_duration(text);
  if (!d) error = std::string(flag) + ": '" + text + "' is not a duration (like 500ms, 10s, 1m30s)";
  return d;
}

std::optional<long long> integer_value(std::string_view text, long long low, long long high) {
  long long n = 0;
  const auto r = std::from_chars(text.data(), text.data() + text.size(), n);
  if (text.empty() || r.ec != std::errc() || r.ptr != text.data() + text.size() || n < low || n > high) {
    return std::nullopt;
  }
  return n;
}

std::optional<subcommand> subcommand_named(std::string_view word) {
  for (subcommand s : {subcommand::run, subcommand::status, subcommand::list, subcommand::unlock, subcommand::ping,
                       subcommand::acl, subcommand::help, subcommand::version}) {
    if (word == name_of(s)) return s;
  }
  return std::nullopt;
}

// One option of pass `o`; false (with `error`) if its value is bad.
bool apply(options& o, int code, const char* value, std::string& error) {
  auto set_mode = [&](lock_mode m) {
    if (o.mode != lock_mode::plain && o.mode != m) {
      error = o.command == subcommand::acl ? "--fenced, --fair, --read, --write, --semaphore, --spin and --latch exclude each other"
                                           : "--fenced, --fair, --read, --write, --semaphore and --spin exclude each other";
      return false;
    }
    o.mode = m;
    return true;
  };
  auto set_duration = [&](const char* flag, auto& target) {
    auto d = duration_value(flag, value, error);
    if (d) target = *d;
    return d.has_value();
  };
  switch (code) {
    case 'V': o.command = subcommand::version; return true;
    case 'v': o.verbose = true; return true;
    case opt_url: o.url = value; return true;
    case opt_connect_timeout: return set_duration("--connect-timeout", o.connect_timeout);
    case opt_password_file: o.password_file = value; return true;
    case opt_tls_ca: o.tls_ca = value; return true;
    case opt_tls_cert: o.tls_cert = value; return true;
    case opt_tls_key: o.tls_key = value; return true;
    case opt_tls_server_name: o.tls_server_name = value; return true;
    case opt_tls_insecure: o.tls_insecure = true; return true;
    case opt_cluster_pubsub: {
      const std::string_view v = value;
      if (v == "auto") o.cluster_pubsub = deadbolt::pubsub_mode::automatic;
      else if (v == "sharded") o.cluster_pubsub = deadbolt::pubsub_mode::sharded;
      else if (v == "classic") o.cluster_pubsub = deadbolt::pubsub_mode::classic;
      else {
        error = std::string("--cluster-pubsub: '") + value + "' is not auto, sharded or classic";
        return false;
      }
      return true;
    }
    case opt_replica_sync: {
      const std::string_view v = value;
      if (v == "auto") o.replica_sync = deadbolt::replica_sync_mode::automatic;
      else if (v == "on") o.replica_sync = deadbolt::replica_sync_mode::on;
      else if (v == "off") o.replica_sync = deadbolt::replica_sync_mode::off;
      else {
        error = std::string("--replica-sync: '") + value + "' is not auto, on or off";
        return false;
      }
      return true;
    }
    case 'w': {
      if (o.nonblock) {
        error = "-n/--nonblock and -w/--wait exclude each other";
        return false;
      }
      std::chrono::milliseconds d{};
      if (!set_duration("--wait", d)) return false;
      o.wait = d;
      return true;
    }
    case 'n':
      if (o.wait) {
        error = "-n/--nonblock and -w/--wait exclude each other";
        return false;
      }
      o.wait = std::chrono::milliseconds(0);
      o.nonblock = true;
      return true;
    case 'E': {
      const auto n = integer_value(value, 0, 255);
      if (!n) error = std::string("--conflict-exit-code: '") + value + "' is not an exit code (0 to 255)";
      if (n) o.conflict_exit_code = static_cast<int>(*n);
      return n.has_value();
    }
    case opt_lease: return set_duration("--lease", o.lease);
    case opt_watchdog: {
      std::chrono::milliseconds d{};
      if (!set_duration("--watchdog", d)) return false;
      o.watchdog = d;
      return true;
    }
    case opt_grace: return set_duration("--grace", o.grace);
    case opt_fenced: return set_mode(lock_mode::fenced);
    case opt_fair: return set_mode(lock_mode::fair);
    case opt_read: return set_mode(lock_mode::read);
    case opt_write: return set_mode(lock_mode::write);
    case opt_spin:
      if (o.command == subcommand::unlock && o.releases != unlock_kind::lock) {
        error = "--spin (a lock) excludes --semaphore and --latch";
        return false;
      }
      return set_mode(lock_mode::spin);
    case opt_user: o.acl_user = value; return true;
    case opt_add: o.acl_add = true; return true;
    case opt_semaphore_n: {
      const auto n = integer_value(value, 1, 1'000'000'000);
      if (!n) {
        error = std::string("--semaphore: '") + value + "' is not a number of permits (1 or more)";
        return false;
      }
      o.permits = *n;
      return set_mode(lock_mode::semaphore);
    }
    case 'q': o.quiet = true; return true;
    case opt_json: o.json = true; return true;
    case 'f': o.force = true; return true;
    case opt_latch:
      if (o.command == subcommand::acl) return set_mode(lock_mode::latch);
      [[fallthrough]];
    case opt_semaphore: {
      const unlock_kind k = code == opt_latch ? unlock_kind::latch : unlock_kind::semaphore;
      if ((o.releases != unlock_kind::lock && o.releases != k) || o.mode == lock_mode::spin) {
        error = o.mode == lock_mode::spin ? "--spin (a lock) excludes --semaphore and --latch" : "--semaphore and --latch exclude each other";
        return false;
      }
      o.releases = k;
      return true;
    }
    case opt_permit: o.permit = value; return true;
    case opt_limit: {
      const auto n = integer_value(value, 1, 1'000'000);
      if (!n) {
        error = std::string("--limit: '") + value + "' is not a number from 1 to 1000000";
        return false;
      }
      o.limit = static_cast<std::size_t>(*n);
      return true;
    }
    default: error = "internal: unhandled option"; return false;
  }
}

// What the options say together, once all are read.
bool check(options& o, std::string& error) {
  using std::chrono::milliseconds;
  constexpr milliseconds longest_lease{std::int64_t{1} << 40};  // the lock scripts' limit
  if (o.connect_timeout <= milliseconds(0)) error = "--connect-timeout must be more than 0";
  else if (o.watchdog && *o.watchdog < milliseconds(30)) error = "--watchdog must be at least 30ms (it is renewed every third of it)";
  else if (o.watchdog && *o.watchdog > longest_lease) error = "--watchdog is too long (at most 2^40 ms, about 34 years)";
  else if (o.lease > longest_lease) error = "--lease is too long (at most 2^40 ms, about 34 years)";
  else if (o.command == subcommand::run && o.lease.count() > 0 && o.watchdog) error = "--lease and --watchdog exclude each other";
  else if (o.command == subcommand::unlock && !o.force) error = "unlock needs --force (it releases the lock whoever holds it)";
  else if (o.command == subcommand::unlock && !o.permit.empty() && o.releases != unlock_kind::semaphore) error = "--permit goes with --semaphore";
  return error.empty();
}

}  // namespace

const char* name_of(subcommand s) {
  switch (s) {
    case subcommand::run: return "run";
    case subcommand::status: return "status";
    case subcommand::list: return "list";
    case subcommand::unlock: return "unlock";
    case subcommand::ping: return "ping";
    case subcommand::help: return "help";
    case subcommand::version: return "version";
    case subcommand::acl: return "acl";
  }
  return "?";
}

std::optional<options> parse_options(int argc, char** argv, std::string& error, std::optional<subcommand>& failed_in) {
  options o;
  ::opterr = 0;  // our own messages

  // Pass 1: global options before the subcommand ("+": stop at the first word).
  bool help_asked = false;
  {
    option_table table(globals, true);
    ::optind = 0;
    int c;
    while ((c = ::getopt_long(argc, argv, table.shorts.c_str(), table.longs.data(), nullptr)) != -1) {
      if (c == '?' || c == ':') {
        const char* word = argv[::optind - 1];
        const bool is_long = std::strncmp(word, "--", 2) == 0;
        const option_spec* later = is_long ? find_option(word, everywhere)
                                           : find_option("-" + std::string(1, static_cast<char>(::optopt)), everywhere);
        error = c == '?' && later != nullptr
                    ? "--" + std::string(later->name) + " goes after the subcommand: deadbolt " + owner_of(*later) + " --" + later->name + " ..."
                    : refused(c, ::optopt, word, globals, "deadbolt");
        return std::nullopt;
      }
      if (c == 'h') help_asked = true;
      else if (!apply(o, c, ::optarg, error)) return std::nullopt;
    }
  }
  if (o.command == subcommand::version) return o;
  if (help_asked && ::optind >= argc) return o;
  if (::optind >= argc) {
    error = "no subcommand (run, status, list, unlock, ping, acl)";
    return std::nullopt;
  }
  const int first = ::optind;
  const auto sub = subcommand_named(argv[first]);
  if (!sub) {
    error = "unknown subcommand '" + word_of(argv[first]) + "' (run, status, list, unlock, ping, acl)";
    return std::nullopt;
  }
  failed_in = *sub;
  if (*sub == subcommand::help) {  // deadbolt help [SUBCOMMAND]
    o.command = subcommand::help;
    if (first + 1 < argc) {
      o.help_for = subcommand_named(argv[first + 1]);
      if (!o.help_for) {
        error = "no help on '" + word_of(argv[first + 1]) + "' (run, status, list, unlock, ping, acl)";
        return std::nullopt;
      }
    }
    return o;
  }
  if (*sub == subcommand::version) {
    o.command = subcommand::version;
    return o;
  }
  o.command = *sub;
  if (help_asked) {  // deadbolt --help run
    o.help_for = *sub;
    o.command = subcommand::help;
    return o;
  }

  // Pass 2: the subcommand's options and the global ones, anywhere before "--" (`run` takes COMMAND
  // after it, verbatim).
  int count = argc - first;
  char** words = argv + first;
  if (*sub == subcommand::run) {
    for (int i = 1; i < count; ++i) {
      if (std::strcmp(words[i], "--") == 0) {
        o.argv.assign(words + i + 1, words + count);
        o.dash_dash = true;
        count = i;
        break;
      }
    }
  }
  option_table table(bit(*sub), false);
  ::optind = 0;
  int c;
  while ((c = ::getopt_long(count, words, table.shorts.c_str(), table.longs.data(), nullptr)) != -1) {
    if (c == '?' || c == ':') {
      error = refused(c, ::optopt, words[::optind - 1], bit(*sub), name_of(*sub));
      return std::nullopt;
    }
    if (c == 'h') {
      o.command = subcommand::help;
      o.help_for = *sub;
      return o;
    }
    if (!apply(o, c, ::optarg, error)) return std::nullopt;
  }
  if (o.command == subcommand::version) return o;
  std::vector<std::string> positional(words + ::optind, words + count);
  if (*sub == subcommand::ping) {
    if (!positional.empty()) {
      error = "ping takes no NAME, got '" + positional[0] + "'";
      return std::nullopt;
    }
  } else if (*sub == subcommand::list) {
    if (positional.size() > 1) {
      error = "expected one PATTERN, got '" + positional[1] + "' too";
      return std::nullopt;
    }
    o.name = positional.empty() || positional[0].empty() ? "*" : positional[0];
  } else if (*sub == subcommand::acl) {
    if (positional.empty()) {
      error = "missing lock NAME";
      return std::nullopt;
    }
    for (const auto& n : positional) {
      if (n.empty()) {
        error = "a lock NAME is empty";
        return std::nullopt;
      }
    }
    o.names = positional;
    o.name = positional[0];
  } else {
    if (positional.size() != 1) {
      error = positional.empty() ? "missing lock NAME" : "expected one lock NAME, got '" + positional[1] + "' too";
      return std::nullopt;
    }
    o.name = positional[0];
    if (o.name.empty()) {
      error = "the lock NAME is empty";
      return std::nullopt;
    }
  }
  if (*sub == subcommand::run && o.argv.empty()) {
    error = o.dash_dash ? "missing COMMAND after --" : "missing '-- COMMAND'";
    return std::nullopt;
  }
  if (!check(o, error)) return std::nullopt;
  if (o.url.empty()) {
    const char* env = std::getenv("REDIS_URL");
    o.url = env != nullptr && *env != '\0' ? env : "redis://127.0.0.1:6379";
  }
  return o;
}

}  // namespace deadbolt::cli
