// The read/write lock (docs/protocol.md §4, Redisson RReadWriteLock): many readers or one writer.
//   keys      one hash for both halves, the bare name: "mode" = "read" | "write", a reader's
//             "<uuid>:<owner>" = its read hold count, the writer's "<uuid>:<owner>:write" = its count;
//             per read hold n a timeout key "{name}:<uuid>:<owner>:rwlock_timeout:<n>" (PX = lease),
//             so the hash lives as long as the longest read hold
//   channel   redisson_rwlock:{name}: "0" after a read unlock (wakes one waiter: a writer),
//             "1" after a write unlock (wakes every waiter: readers share)
//   scripts   lua/read_acquire.lua, lua/read_unlock.lua, lua/read_renew.lua (watchdog of our own read
//             holds), lua/write_acquire.lua, lua/write_unlock.lua, lua/rw_force_unlock.lua,
//             lua/rw_is_locked.lua
//   rules     readers share; the writer may take reads too (then unlocking the write downgrades it to a
//             read lock); a reader cannot upgrade (it would wait for itself); no writer preference.
//   waiting   as the reentrant lock, on the shared channel with the by-payload wake policy.
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {
namespace {

class rw_half : public lock_protocol {
 public:
  wake_policy wake() const override { return wake_policy::by_payload; }
  void is_locked(resp::encoder& e, request& r, const lock_names& n) const override {
    begin_script(e, r, scripts::rw_is_locked, 1, 1);
    e.bulk(n.name).bulk(mode());
  }
  void force_unlock(resp::encoder& e, request& r, const lock_names& n, std::string_view,
                    std::string_view publish) const override {
    begin_script(e, r, scripts::rw_force_unlock, 2, 3);
    e.bulk(n.name).bulk(n.channel).bulk(mode()).bulk(message()).bulk(publish);
  }

 protected:
  ~rw_half() = default;
  virtual std::string_view mode() const = 0;
  virtual std::string_view message() const = 0;
};

class read_half final : public rw_half {
 public:
  hold_field field() const override { return hold_field::read; }
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    begin_script(e, r, scripts::read_acquire, 2, 3);
    e.bulk(n.name);
    read_timeout_prefix(e, n.name, c.who);
    e.bulk(c.lease_ms);
    owner_field(e, c.who);
    e.bulk_concat({c.who.client_id, ":", c.who.owner, ":write"});
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    begin_script(e, r, scripts::read_unlock, 5, 4);
    e.bulk(n.name).bulk(n.channel);
    read_timeout_prefix(e, n.name, c.who);
    e.bulk(n.key_prefix).bulk(c.latch);
    e.bulk(message());
    owner_field(e, c.who);
    e.bulk(c.publish).bulk(c.latch_ttl_ms);
  }
  void refresh(resp::encoder& e, request& r, const lock_names& n, const owner_ref& who,
               std::string_view lease_ms) const override {
    begin_script(e, r, scripts::read_renew, 2, 2);
    e.bulk(n.name);
    read_timeout_prefix(e, n.name, who);
    e.bulk(lease_ms);
    owner_field(e, who);
  }

 private:
  std::string_view mode() const override { return "read"; }
  std::string_view message() const override { return "0"; }
};

class write_half final : public rw_half {
 public:
  hold_field field() const override { return hold_field::write; }
  void acquire(resp::encoder& e, request& r, const lock_names& n, const acquire_call& c) const override {
    begin_script(e, r, scripts::write_acquire, 1, 2);
    e.bulk(n.name).bulk(c.lease_ms);
    owner_field(e, c.who);
  }
  void unlock(resp::encoder& e, request& r, const lock_names& n, const unlock_call& c) const override {
    begin_script(e, r, scripts::write_unlock, 3, 5);
    e.bulk(n.name).bulk(n.channel).bulk(c.latch);
    e.bulk(message()).bulk(c.lease_ms);
    owner_field(e, c.who);
    e.bulk(c.publish).bulk(c.latch_ttl_ms);
  }

 private:
  std::string_view mode() const override { return "write"; }
  std::string_view message() const override { return "1"; }
};

}  // namespace

void read_timeout_prefix(resp::encoder& e, std::string_view name, const owner_ref& who) {
  // suffixName(name, "<uuid>:<owner>") + ":rwlock_timeout"
  if (name.find('{') != std::string_view::npos) {
    e.bulk_concat({name, ":", who.client_id, ":", who.owner, ":rwlock_timeout"});
  } else {
    e.bulk_concat({"{", name, "}:", who.client_id, ":", who.owner, ":rwlock_timeout"});
  }
}

const lock_protocol& read_protocol() {
  static const read_half p;
  return p;
}
const lock_protocol& write_protocol() {
  static const write_half p;
  return p;
}

}  // namespace deadbolt::detail
