// deadbolt acl: the allow-list ACL rule that lets a Redis user do with the lock NAME what deadbolt does,
// and nothing more (docs/acl.md): the library's grants for the kind (deadbolt/acl.hpp) with inspect()
// (run and status read what NAME is first), plus the CLI's own holder info keys. Nothing is sent: the
// rule is printed, as one `ACL SETUSER` line that redis-cli reads from its standard input.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "deadbolt/acl.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/key_names.hpp"
#include "exit_codes.hpp"
#include "holder_info.hpp"
#include "deadbolt/url.hpp"

namespace deadbolt::cli {
namespace {

deadbolt::acl_object object_of(lock_mode m) {
  switch (m) {
    case lock_mode::fenced: return deadbolt::acl_object::fenced_lock;
    case lock_mode::fair: return deadbolt::acl_object::fair_lock;
    case lock_mode::read:
    case lock_mode::write: return deadbolt::acl_object::read_write_lock;
    case lock_mode::semaphore: return deadbolt::acl_object::expirable_semaphore;
    case lock_mode::spin: return deadbolt::acl_object::spin_lock;
    case lock_mode::latch: return deadbolt::acl_object::count_down_latch;
    case lock_mode::plain: break;
  }
  return deadbolt::acl_object::lock;
}

}  // namespace

int acl_command(const options& o) {
  deadbolt::endpoint ep;
  if (deadbolt::parse_url(o.url, ep)) {
    std::fprintf(stderr, "deadbolt: invalid server URL '%s': %s\n", deadbolt::redacted_url(o.url).c_str(), deadbolt::why_invalid_url(o.url).c_str());
    return exit_usage;
  }
  deadbolt::acl_options settings;
  settings.cluster = ep.is_cluster();
  settings.cluster_pubsub = o.cluster_pubsub;
  settings.select = ep.database != 0;
  // --replica-sync off: no ROLE, WAIT (but Sentinel confirms its master with ROLE: kept there)
  settings.replica_sync = o.replica_sync != deadbolt::replica_sync_mode::off || ep.is_sentinel();
  settings.inspect = true;  // run, status and unlock --force read what NAME is first
  deadbolt::acl_grants grants;
  for (const auto& name : o.names) {
    grants.add(object_of(o.mode), name, settings);
    if (o.mode == lock_mode::latch) continue;  // (unlock --force --latch only: no holders)
    // The holder info (holder_info.hpp): SET and PEXPIRE by run, GET by status and run's wait line,
    // DEL at the release; one key per hold.
    for (const char* command : {"set", "get", "pexpire", "del"}) grants.add_command(command);
    grants.add_key_pattern(deadbolt::acl_glob_escape(holder_info_key(name, "")) + "*");
    // unlock --force cannot tell a fair lock without queued waiters from a reentrant one (one hash): it
    // releases it as a reentrant lock, which wakes a waiter on the lock's own channel, not a fair
    // waiter's (those the library's fair grants cover).
    if (o.mode == lock_mode::fair) {
      const std::string channel = deadbolt::prefix_name("redisson_lock__channel", name);
      grants.add_key_pattern(deadbolt::acl_glob_escape(channel));
      grants.add_channel_pattern(deadbolt::acl_glob_escape(channel));
    }
  }
  const std::string user = !o.acl_user.empty() ? o.acl_user : !ep.user.empty() ? ep.user : "deadbolt";
  // Redis refuses user names with spaces; quotes and control characters would need quoting here.
  for (char c : user) {
    if (static_cast<unsigned char>(c) <= ' ' || c == '"' || c == '\'' || c == '\\' || c == 127) {
      std::fprintf(stderr, "deadbolt: --user: '%s' is not a user name Redis accepts (no spaces, quotes or control characters)\n", user.c_str());
      return exit_usage;
    }
  }
  // A new user also needs `on` and a password: ACL SETUSER USER on >PASSWORD (or in the same line).
  // --add: no resets, to add another kind's grants to a user that has a rule already (ACL SETUSER adds).
  std::printf("ACL SETUSER %s %s%s\n", user.c_str(), o.acl_add ? "" : "resetkeys resetchannels -@all ", grants.text().c_str());
  return exit_ok;
}

}  // namespace deadbolt::cli
