// deadbolt unlock --force: release NAME whoever holds it, but only if NAME is what the caller says it
// is. inspect() tells: a hash is touched only if it has a lock's shape (owner fields
// "<uuid>:<n>[:write]", a read/write lock's "mode"); a number is a semaphore's or a latch's, and the
// caller says which (--semaphore, --latch); anything else is refused, so application data is never
// deleted by mistake.
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "deadbolt/key_names.hpp"
#include "connect.hpp"
#include "exit_codes.hpp"

namespace deadbolt::cli {
namespace {

class unlocker {
 public:
  explicit unlocker(const options& o) : o_(o), session_(o) {}

  int run() {
    return session_.run([this] { inspect(); });
  }

 private:
  void inspect() {
    session_.client.async_inspect(o_.name, [this](std::error_code ec, deadbolt::object_info info) {
      if (ec) return failed(ec);
      if (info.kind == deadbolt::object_kind::none) return done("deadbolt: " + o_.name + " was not locked", exit_ok);
      switch (info.kind) {
        case deadbolt::object_kind::lock:
        case deadbolt::object_kind::fenced_lock:
        case deadbolt::object_kind::fair_lock:
        case deadbolt::object_kind::read_write_lock: return lock(info);
        case deadbolt::object_kind::expirable_semaphore:
        case deadbolt::object_kind::semaphore_or_latch: return number(info);
        default: break;
      }
      if (info.redis_type == "hash") return refuse("it is a hash but not a lock (field '" + info.foreign_field + "')");
      refuse("it is a " + info.redis_type + ", not a lock, semaphore or latch");
    });
  }

  // The kind decides who is woken: a read/write lock's waiters listen on its own channel, a fair
  // lock's head on its own.
  void lock(const deadbolt::object_info& info) {
    if (o_.releases != unlock_kind::lock) return refuse("it is a lock (a hash), not a semaphore or latch");
    auto released = [this, queued = info.queue.size()](std::error_code ec, bool deleted) {
      if (ec) return failed(ec);
      const std::string message = deleted ? "deadbolt: released lock " + o_.name : "deadbolt: " + o_.name + " was not locked";
      if (queued == 0) return done(message, exit_ok);
      clear_fair_queue(message);
    };
    if (info.mode == "read") return session_.client.read_write_lock(o_.name).read().async_force_unlock(released);
    if (info.mode == "write") return session_.client.read_write_lock(o_.name).write().async_force_unlock(released);
    if (info.kind == deadbolt::object_kind::fair_lock) return session_.client.fair_lock(o_.name).async_force_unlock(released);
    // A spin lock's waiters poll: a plain DEL, with no channel to publish on (an ACL user of a spin lock
    // has none, docs/acl.md).
    if (o_.mode == lock_mode::spin) return session_.client.spin_lock(o_.name).async_force_unlock(released);
    session_.client.lock(o_.name).async_force_unlock(released);
  }

  // A fair lock's waiters: one that died (SIGKILL, a crash) keeps its place for minutes (Redisson's
  // fair-queue timeout, 5 min), and a free lock goes to nobody but the first in line. Nothing tells a
  // dead waiter from a live one, so every place is removed (the queue and the deadlines, docs/protocol.md
  // §3) and each waiter is woken on its own channel with the unlock message: a live one queues again
  // (the order among them is lost), a dead one does not. The same message goes as PUBLISH and SPUBLISH,
  // for waiters subscribed either way; keys and channels carry the name's hash tag (one cluster slot).
  void clear_fair_queue(const std::string& released) {
    static const char script[] =
        "local waiters = redis.call('lrange', KEYS[1], 0, -1)\n"
        "redis.call('del', KEYS[1], KEYS[2])\n"
        "for _, w in ipairs(waiters) do\n"
        "  redis.pcall('publish', ARGV[1] .. ':' .. w, '0')\n"
        "  redis.pcall('spublish', ARGV[1] .. ':' .. w, '0')\n"
        "end\n"
        "return #waiters\n";
    session_.client.async_command({"EVAL", script, "2", deadbolt::prefix_name("redisson_lock_queue", o_.name),
                           deadbolt::prefix_name("redisson_lock_timeout", o_.name),
                           deadbolt::prefix_name("redisson_lock__channel", o_.name)},
                          [this, released](std::error_code ec, deadbolt::reply r) {
                            if (ec) {
                              std::printf("%s\n", released.c_str());
                              std::fprintf(stderr, "deadbolt: cannot clear the queue of %s: %s\n", o_.name.c_str(),
                                           r.text.empty() ? ec.message().c_str() : r.text.c_str());
                              return finish(exit_failure);
                            }
                            const long long n = r.as_int().value_or(0);
                            done(released + "; removed " + std::to_string(n) + " waiter" + (n == 1 ? "" : "s") +
                                     " from its queue (live ones queue again)",
                                 exit_ok);
                          });
  }

  // A number: a semaphore's available permits or a latch's count; only the caller knows which.
  void number(const deadbolt::object_info& info) {
    if (o_.releases == unlock_kind::lock) {
      return refuse("it holds a number, a semaphore's or a latch's: say --semaphore or --latch");
    }
    if (o_.releases == unlock_kind::latch) {
      return session_.client.count_down_latch(o_.name).async_delete([this](std::error_code ec, bool) {
        if (ec) return failed(ec);
        done("deadbolt: released latch " + o_.name + " (deleted; its waiters go on)", exit_ok);
      });
    }
    if (info.kind != deadbolt::object_kind::expirable_semaphore) {
      return refuse("it is a plain semaphore, which records no holders: there is nothing to release "
                    "(a permit-expirable semaphore's permits can be)");
    }
    expirable();
  }

  // A permit-expirable semaphore: release the named permit, or take back the expired ones.
  void expirable() {
    auto sem = session_.client.expirable_semaphore(o_.name);
    if (o_.permit.empty()) {
      return sem.async_available_permits([this](std::error_code ec, std::int64_t available) {
        if (ec) return failed(ec);
        done("deadbolt: took back the expired permits of " + o_.name + ": " + std::to_string(available) + " available",
             exit_ok);
      });
    }
    const auto id = deadbolt::permit_id::from_hex(o_.permit);
    if (!id) return refuse("'" + o_.permit + "' is not a permit id (32 hex digits, DEADBOLT_PERMIT_ID)");
    sem.async_release(*id, [this](std::error_code ec) {
      if (ec == deadbolt::errc::no_such_permit) {
        return done("deadbolt: " + o_.name + " has no permit " + o_.permit + " (released or expired already)",
                    exit_ok);
      }
      if (ec) return failed(ec);
      done("deadbolt: released permit " + o_.permit + " of " + o_.name, exit_ok);
    });
  }

  void refuse(const std::string& why) {
    std::fprintf(stderr, "deadbolt: not touching %s: %s\n", o_.name.c_str(), why.c_str());
    finish(exit_failure);
  }
  void failed(std::error_code ec) { finish(report_error(o_, ec, "cannot unlock " + o_.name)); }
  void done(const std::string& message, int code) {
    std::printf("%s\n", message.c_str());
    finish(code);
  }
  void finish(int code) { session_.finish(code); }

  const options& o_;
  one_shot session_;
};

}  // namespace

int unlock_command(const options& o) { return unlocker(o).run(); }

}  // namespace deadbolt::cli
