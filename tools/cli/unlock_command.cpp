// deadbolt unlock --force: release NAME whoever holds it, but only if NAME is what the caller says it
// is. A hash is touched only if it has a lock's shape (owner fields "<uuid>:<n>[:write]", a read/write
// lock's "mode"); a number is a semaphore's or a latch's, and the caller says which (--semaphore,
// --latch); anything else is refused, so application data is never deleted by mistake.
#include <cctype>
#include <cstdio>
#include <string>

#include "commands.hpp"
#include "connect.hpp"
#include "detail/keys.hpp"
#include "exit_codes.hpp"

namespace deadbolt::cli {
namespace {

bool is_uuid(std::string_view s) {
  if (s.size() != 36) return false;
  for (std::size_t i = 0; i < s.size(); ++i) {
    const bool dash = i == 8 || i == 13 || i == 18 || i == 23;
    if (dash ? s[i] != '-' : !std::isxdigit(static_cast<unsigned char>(s[i]))) return false;
  }
  return true;
}

bool is_integer(std::string_view s) {
  if (!s.empty() && s[0] == '-') s.remove_prefix(1);
  if (s.empty()) return false;
  for (char c : s) {
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  }
  return true;
}

/// A Redisson lock hash: owner fields "<uuid>:<thread>[:write]" with hold counts, and a read/write
/// lock's "mode". On failure `bad` names the first field that is not.
bool lock_shaped(const deadbolt::reply& hash, std::string& bad) {
  for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
    const std::string& key = hash.elements[i].text;
    const std::string& value = hash.elements[i + 1].text;
    bool ok = false;
    if (key == "mode") {
      ok = value == "read" || value == "write";
    } else if (key.size() > 37 && is_uuid(std::string_view(key).substr(0, 36)) && key[36] == ':') {
      std::string_view owner = std::string_view(key).substr(37);
      const std::string_view write = ":write";
      if (owner.size() > write.size() && owner.substr(owner.size() - write.size()) == write) {
        owner.remove_suffix(write.size());
      }
      ok = is_integer(owner) && is_integer(value);
    }
    if (!ok) {
      bad = key;
      return false;
    }
  }
  return true;
}

class unlocker {
 public:
  explicit unlocker(const options& o) : o_(o), client_(io_.get_executor(), make_config(o)), connector_(io_, client_, o) {}

  int run() {
    connector_.start(o_.connect_timeout, [this](int code) {
      if (code != 0) return finish(code);
      inspect();
    });
    io_.run();
    return code_;
  }

 private:
  void inspect() {
    client_.async_command({"TYPE", o_.name}, [this](std::error_code ec, deadbolt::reply type) {
      if (ec) return failed(ec);
      if (type.text == "none") return done("deadbolt: " + o_.name + " was not locked", exit_ok);
      if (type.text == "hash") return hash();
      if (type.text == "string") return number();
      refuse("it is a " + type.text + ", not a lock, semaphore or latch");
    });
  }

  void hash() {
    if (o_.releases != unlock_kind::lock) return refuse("it is a lock (a hash), not a semaphore or latch");
    client_.async_command({"HGETALL", o_.name}, [this](std::error_code ec, deadbolt::reply fields) {
      if (ec) return failed(ec);
      std::string bad;
      if (!lock_shaped(fields, bad)) return refuse("it is a hash but not a lock (field '" + bad + "')");
      // The kind decides who is woken: a read/write lock's waiters listen on its own channel, a
      // fair lock's head on its own. The data tells the kind: a "mode" field, or a wait queue.
      const std::string mode = field(fields, "mode");
      auto released = [this](std::error_code fec, bool deleted) {
        if (fec) return failed(fec);
        done(deleted ? "deadbolt: released lock " + o_.name : "deadbolt: " + o_.name + " was not locked", exit_ok);
      };
      if (mode == "read") return client_.read_write_lock(o_.name).read().async_force_unlock(released);
      if (mode == "write") return client_.read_write_lock(o_.name).write().async_force_unlock(released);
      client_.async_command({"EXISTS", detail::prefix_name("redisson_lock_queue", o_.name)},
                            [this, released](std::error_code qec, deadbolt::reply queued) {
                              if (qec) return failed(qec);
                              if (queued.as_int().value_or(0) == 1) {
                                return client_.fair_lock(o_.name).async_force_unlock(released);
                              }
                              client_.lock(o_.name).async_force_unlock(released);
                            });
    });
  }

  // A number: a semaphore's available permits or a latch's count; only the caller knows which.
  void number() {
    if (o_.releases == unlock_kind::lock) {
      return refuse("it holds a number, a semaphore's or a latch's: say --semaphore or --latch");
    }
    if (o_.releases == unlock_kind::latch) {
      return client_.count_down_latch(o_.name).async_delete([this](std::error_code ec, bool) {
        if (ec) return failed(ec);
        done("deadbolt: released latch " + o_.name + " (deleted; its waiters go on)", exit_ok);
      });
    }
    client_.async_command({"EXISTS", detail::suffix_name(o_.name, "timeout")}, [this](std::error_code ec, deadbolt::reply r) {
      if (ec) return failed(ec);
      if (r.as_int().value_or(0) == 0) {
        return refuse("it is a plain semaphore, which records no holders: there is nothing to release "
                      "(a permit-expirable semaphore's permits can be)");
      }
      expirable();
    });
  }

  // A permit-expirable semaphore: release the named permit, or take back the expired ones.
  void expirable() {
    auto sem = client_.expirable_semaphore(o_.name);
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

  static std::string field(const deadbolt::reply& hash, const std::string& key) {
    for (std::size_t i = 0; i + 1 < hash.elements.size(); i += 2) {
      if (hash.elements[i].text == key) return hash.elements[i + 1].text;
    }
    return {};
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
  void finish(int code) {
    code_ = code;
    client_.shutdown();
  }

  const options& o_;
  asio::io_context io_;
  deadbolt::client client_;
  connector connector_;
  int code_ = exit_failure;
};

}  // namespace

int unlock_command(const options& o) { return unlocker(o).run(); }

}  // namespace deadbolt::cli
