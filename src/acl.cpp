// The ACL grants of each object kind (include/deadbolt/acl.hpp, docs/acl.md). The commands are those the
// kind's scripts call (lua/*.lua, tests/core/acl_test.cpp checks them against the embedded scripts) and
// the ones its operations send directly; the keys those its scripts are given in KEYS or build inside
// (docs/protocol.md §0's key table).
#include "deadbolt/acl.hpp"

#include <algorithm>

#include "base/keys.hpp"

namespace deadbolt {
namespace {

// Every connection: the scripts, and EVAL for the NOSCRIPT fallback (the script's body sent again);
// PING (a subscriber's liveness, client::async_ping). HELLO and AUTH need no grant (Redis allows them to
// everyone); CLIENT SETNAME is the RESP2 login's.
constexpr std::string_view every_connection[] = {"evalsha", "eval", "ping", "client|setname"};

// The reentrant lock's scripts (lock_acquire, lock_unlock, lock_renew, lock_force_unlock, the unlock
// latch) and queries (HEXISTS, HGET, PTTL, EXISTS; DEL of a used latch): shared by the fenced and spin
// locks, and the write half's renewal.
constexpr std::string_view hash_lock[] = {"del", "exists", "get", "hexists", "hget", "hincrby", "pexpire", "pttl", "set"};
constexpr std::string_view fenced_extra[] = {"incr"};
constexpr std::string_view fair_lock[] = {"del",   "exists", "get",  "hexists", "hget", "hincrby", "hset",    "lindex", "lpop", "lrange",
                            "lrem",  "pexpire", "pttl", "rpush",  "set",  "zadd",    "zincrby", "zrange", "zrem", "zscore"};
constexpr std::string_view read_write_lock[] = {"del",  "get",  "hdel", "hexists", "hget", "hincrby",
                                  "hkeys", "hlen", "hset", "pexpire", "pttl", "set"};
constexpr std::string_view semaphore[] = {"decrby", "get", "incrby", "set"};
constexpr std::string_view expirable_semaphore[] = {"decrby", "get",           "incrby", "pexpire", "pttl",             "set",
                                      "zadd",   "zrange",        "zrangebyscore", "zrank", "zremrangebyscore", "zrem",
                                      "zscore"};
constexpr std::string_view count_down_latch[] = {"decr", "del", "exists", "get", "set"};
constexpr std::string_view classic_pubsub[] = {"subscribe", "unsubscribe", "publish"};
constexpr std::string_view sharded_pubsub[] = {"ssubscribe", "sunsubscribe", "spublish"};
constexpr std::string_view replica_sync[] = {"role", "wait"};
constexpr std::string_view cluster_layout[] = {"cluster|shards", "cluster|slots", "asking"};
// lua/inspect.lua
constexpr std::string_view inspect[] = {"getrange", "hgetall", "hlen", "hscan", "llen", "lrange", "pttl", "type", "zcard", "zrange"};

void add_unique(std::vector<std::string>& to, std::string rule) {
  if (std::find(to.begin(), to.end(), rule) == to.end()) to.push_back(std::move(rule));
}

bool printable_plain(unsigned char c) { return c > ' ' && c < 127 && c != '"' && c != '\'' && c != '\\'; }

// As redis-cli and ACL files split arguments (sdssplitargs): plain, or in double quotes with escapes.
void append_quoted(std::string& out, std::string_view rule) {
  if (!rule.empty() && std::all_of(rule.begin(), rule.end(), [](char c) { return printable_plain(static_cast<unsigned char>(c)); })) {
    out.append(rule);
    return;
  }
  static const char hex[] = "0123456789abcdef";
  out += '"';
  for (char ch : rule) {
    const auto c = static_cast<unsigned char>(ch);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += ch;
    } else if (c >= ' ' && c < 127) {
      out += ch;
    } else {
      out.append("\\x").append(1, hex[c >> 4]).append(1, hex[c & 15]);
    }
  }
  out += '"';
}

}  // namespace

std::string acl_glob_escape(std::string_view literal) {
  std::string out;
  out.reserve(literal.size());
  for (char c : literal) {
    // ACL SETUSER refuses a pattern with whitespace ("Syntax error"): one character of any kind
    // stands for it, the only way such a name can be granted.
    if (c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r') {
      out += '?';
      continue;
    }
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') out += '\\';
    out += c;
  }
  return out;
}

void acl_grants::add_command(std::string_view command) { add_unique(commands_, "+" + std::string(command)); }
void acl_grants::add_key_pattern(std::string_view pattern) { add_unique(keys_, "~" + std::string(pattern)); }
void acl_grants::add_channel_pattern(std::string_view pattern) { add_unique(channels_, "&" + std::string(pattern)); }

void acl_grants::add(acl_object kind, std::string_view name, const acl_options& options) {
  auto commands = [this](const auto& l) {
    for (auto c : l) add_command(c);
  };
  auto key = [this](const std::string& literal) { add_key_pattern(acl_glob_escape(literal)); };
  // One channel, or (the fair lock's waiters) every channel under a prefix: subscribed to, and published
  // on by the scripts, the classic or the sharded way (docs/protocol.md §13).
  auto channel = [&](const std::string& pattern) {
    const bool classic = !options.cluster || options.cluster_pubsub != pubsub_mode::sharded;
    const bool sharded = options.cluster && options.cluster_pubsub != pubsub_mode::classic;
    if (classic) commands(classic_pubsub);
    if (sharded) commands(sharded_pubsub);
    add_channel_pattern(pattern);
  };
  const std::string literal(name);
  // Every unlock (and its retries) has a latch key of its own: "redisson_unlock_latch:{name}:<request id>".
  const std::string latches = acl_glob_escape(detail::unlock_latch_prefix(name)) + ":*";

  commands(every_connection);
  if (options.select) add_command("select");
  if (options.replica_sync) commands(replica_sync);
  if (options.cluster) {
    commands(cluster_layout);
    if (options.cluster_pubsub == pubsub_mode::automatic) add_command("pubsub|shardnumsub");
  }

  switch (kind) {
    case acl_object::lock:
    case acl_object::fenced_lock:
    case acl_object::spin_lock:
      commands(hash_lock);
      if (kind == acl_object::fenced_lock) commands(fenced_extra);
      key(literal);
      if (kind == acl_object::fenced_lock) key(prefix_name("redisson_lock_token", name));
      add_key_pattern(latches);
      if (kind != acl_object::spin_lock) {
        // The unlock scripts take the channel in KEYS: a key to the ACL as well as a channel.
        key(detail::lock_channel(name));
        channel(acl_glob_escape(detail::lock_channel(name)));
      }
      break;
    case acl_object::fair_lock:
      commands(fair_lock);
      key(literal);
      key(prefix_name("redisson_lock_queue", name));
      key(prefix_name("redisson_lock_timeout", name));
      key(detail::lock_channel(name));  // the channel base, in KEYS; each waiter's is "<base>:<owner field>"
      add_key_pattern(latches);
      channel(acl_glob_escape(detail::lock_channel(name)) + ":*");
      break;
    case acl_object::read_write_lock: {
      commands(read_write_lock);
      // The read holds' timeout keys "<prefix>:<uuid>:<owner>:rwlock_timeout:<n>", where prefix is "{name}"
      // (the name itself when it has a '{'); the read unlock reads every holder's and takes the prefix
      // itself in KEYS.
      const std::string prefix = literal.find('{') != std::string::npos ? literal : "{" + literal + "}";
      key(literal);
      key(prefix);
      add_key_pattern(acl_glob_escape(prefix) + ":*:rwlock_timeout*");
      add_key_pattern(latches);
      const std::string rw_channel = prefix_name("redisson_rwlock", name);
      key(rw_channel);
      channel(acl_glob_escape(rw_channel));
      break;
    }
    case acl_object::semaphore:
    case acl_object::expirable_semaphore: {
      if (kind == acl_object::semaphore) commands(semaphore);
      else commands(expirable_semaphore);
      key(literal);
      if (kind == acl_object::expirable_semaphore) key(suffix_name(name, "timeout"));
      const std::string sc = prefix_name("redisson_sc", name);
      key(sc);
      channel(acl_glob_escape(sc));
      break;
    }
    case acl_object::count_down_latch: {
      commands(count_down_latch);
      // Braces always added, even to a braced name (docs/protocol.md §10).
      const std::string latch_channel = "redisson_countdownlatch__channel__{" + literal + "}";
      key(literal);
      key(latch_channel);
      channel(acl_glob_escape(latch_channel));
      break;
    }
  }

  if (options.inspect) {
    commands(inspect);
    key(literal);
    key(prefix_name("redisson_lock_queue", name));
    key(prefix_name("redisson_lock_timeout", name));
    key(prefix_name("redisson_lock_token", name));
    key(suffix_name(name, "timeout"));
  }
}

std::vector<std::string> acl_grants::rules() const {
  std::vector<std::string> all(commands_);
  all.insert(all.end(), keys_.begin(), keys_.end());
  all.insert(all.end(), channels_.begin(), channels_.end());
  return all;
}

std::string acl_grants::text() const {
  std::string out;
  for (const auto& rule : rules()) {
    if (!out.empty()) out += ' ';
    append_quoted(out, rule);
  }
  return out;
}

std::string acl_rule(acl_object kind, std::string_view name, const acl_options& options) {
  acl_grants grants;
  grants.add(kind, name, options);
  return "resetkeys resetchannels -@all " + grants.text();
}

}  // namespace deadbolt
