// The other kinds' workloads, through the blocking API (workload.hpp): a semaphore (each worker takes
// one of `permits` permits, works, releases it), a read/write lock (a worker takes the write half
// one time in three, else the read half), a fair lock, a multi lock beside its members, and a red
// lock over independent servers. Each hold is recorded as the mutex's are, with its `kind`
// (and the semaphore's `permits`), so that the checker applies the kind's invariant: at most
// `permits` holders at once; readers share, a writer excludes everyone.
#include <algorithm>
#include <random>
#include <thread>
#include <vector>

#include <deadbolt/blocking.hpp>
#include <deadbolt/blocking_multi_lock.hpp>
#include <deadbolt/port/hooks.hpp>

#include "history.hpp"
#include "lease_probe.hpp"
#include "workload.hpp"

namespace verify {
namespace {

void pause(std::minstd_rand& random, std::chrono::milliseconds upto) {
  if (upto.count() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(random() % (upto.count() + 1)));
}

event hold_event(const workload_options& o, const char* type, const char* f, const std::string& hold,
                 const std::string& name) {
  event e(o.process, type, f);
  e.with("hold", hold).with("lock", name);
  return e;
}

void semaphore_worker(const workload_options& o, int w, deadbolt::blocking_client& client, const std::atomic<bool>& stop) {
  const std::string name = lock_of(o, w);
  auto semaphore = client.semaphore(name);
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".s" + std::to_string(w) + "." + std::to_string(n);
    const std::int64_t asked = now_ns();
    event(o.process, "invoke", "acquire", asked).with("hold", hold).with("lock", name).with("kind", "semaphore")
        .with("permits", o.permits).with("deadline", asked + std::chrono::nanoseconds(o.wait).count()).emit();
    std::error_code ec;
    const bool got = semaphore.try_acquire(1, o.wait, ec);
    if (ec || !got) {
      hold_event(o, "fail", "acquire", hold, name).with("error", ec ? ec.message() : "timeout").emit();
      if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    hold_event(o, "ok", "acquire", hold, name).emit();
    pause(random, o.work);
    hold_event(o, "ok", "work", hold, name).emit();  // the permit was used (the checker's progress)
    hold_event(o, "invoke", "release", hold, name).emit();
    semaphore.release(1, ec);
    event released = hold_event(o, ec ? "fail" : "ok", "unlock", hold, name);
    if (ec) released.with("error", ec.message());
    released.emit();
    pause(random, o.think);
  }
}

template <typename Half>
bool hold_half(const workload_options& o, Half& half, const char* kind, const char* mode, const std::string& hold,
               const std::string& name, hold_table& holds, std::minstd_rand& random) {
  const auto owner = static_cast<std::int64_t>(deadbolt::port::thread_id());
  const auto lease = o.lease.count() > 0 ? o.lease : o.watchdog;
  const std::int64_t asked = now_ns();
  event invoke(o.process, "invoke", "acquire", asked);
  invoke.with("hold", hold).with("lock", name).with("kind", kind);
  if (mode) invoke.with("mode", mode);
  invoke.with("deadline", asked + std::chrono::nanoseconds(o.wait).count())
      .with("lease_deadline", asked + std::chrono::nanoseconds(lease).count()).emit();
  std::error_code ec;
  holds.set(name, owner, hold);
  const bool got = half.try_lock_for(o.wait, o.lease, ec);
  if (ec || !got) {
    holds.clear(name, owner);
    hold_event(o, "fail", "acquire", hold, name).with("error", ec ? ec.message() : "timeout").emit();
    return !ec;
  }
  hold_event(o, "ok", "acquire", hold, name).emit();
  // The work, in steps, each recorded (a step is the holder using the resource: the checker's hold
  // lasts until its last step), with the lease deadline the client counts on.
  for (int i = 0; i < o.increments; ++i) {
    pause(random, o.work);
    const std::int64_t at = now_ns();
    if (const std::int64_t deadline = blocking_lease_deadline(half, at)) {
      hold_event(o, "ok", "lease", hold, name).with("lease_deadline", deadline).with("source", "valid_for").emit();
    }
    hold_event(o, "ok", "work", hold, name).emit();
  }
  hold_event(o, "invoke", "release", hold, name).emit();
  half.unlock(ec);
  holds.clear(name, owner);
  event released = hold_event(o, ec ? "fail" : "ok", "unlock", hold, name);
  if (ec) released.with("error", ec.message());
  released.emit();
  return true;
}

void read_write_worker(const workload_options& o, int w, deadbolt::blocking_client& client, hold_table& holds,
                       const std::atomic<bool>& stop) {
  const std::string name = lock_of(o, w);
  auto rw = client.read_write_lock(name);
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".r" + std::to_string(w) + "." + std::to_string(n);
    const bool ok = random() % 3 == 0 ? hold_half(o, rw.write(), "read-write", "write", hold, name, holds, random)
                                      : hold_half(o, rw.read(), "read-write", "read", hold, name, holds, random);
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pause(random, o.think);
  }
}

void fair_worker(const workload_options& o, int w, deadbolt::blocking_client& client, hold_table& holds,
                 const std::atomic<bool>& stop) {
  const std::string name = lock_of(o, w);
  auto lock = client.fair_lock(name);
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".f" + std::to_string(w) + "." + std::to_string(n);
    if (!hold_half(o, lock, "fair", nullptr, hold, name, holds, random)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    pause(random, o.think);
  }
}

/// One hold of a composite (a red lock, a multi lock): `members`, when set, lists the locks it holds
/// ("a,b": the checker checks it with each of them). The lease-lost handler names a member lock and
/// the calling thread (the members' owner): the hold is in `holds` under each member's name. False
/// when the acquire failed with an error.
template <typename Lock>
bool hold_composite(const workload_options& o, Lock& lock, const char* kind, const std::string& hold,
                    const std::string& name, const std::string& members, hold_table& holds, std::minstd_rand& random) {
  const auto owner = static_cast<std::int64_t>(deadbolt::port::thread_id());
  std::vector<std::string> names;
  for (std::size_t from = 0; from <= members.size();) {
    const std::size_t comma = std::min(members.find(',', from), members.size());
    names.push_back(members.empty() ? name : members.substr(from, comma - from));
    from = comma + 1;
  }
  for (const auto& n : names) holds.set(n, owner, hold);
  struct forget {
    hold_table& holds;
    const std::vector<std::string>& names;
    std::int64_t owner;
    ~forget() { for (const auto& n : names) holds.clear(n, owner); }
  } forget_holds{holds, names, owner};
  const std::int64_t asked = now_ns();
  event invoke(o.process, "invoke", "acquire", asked);
  invoke.with("hold", hold).with("lock", name).with("kind", kind);
  if (!members.empty()) invoke.with("locks", members);
  invoke.with("deadline", asked + std::chrono::nanoseconds(o.wait).count())
      .with("lease_deadline", asked + std::chrono::nanoseconds(o.watchdog).count()).emit();
  bool got = false;
  std::string error = "timeout";
  try {
    got = lock.try_lock_for(o.wait);  // the watchdog's lease; the error_code form takes no wait
  } catch (const std::system_error& e) {
    error = e.code().message();
  }
  if (!got) {
    hold_event(o, "fail", "acquire", hold, name).with("error", error).emit();
    return error == "timeout";
  }
  hold_event(o, "ok", "acquire", hold, name).emit();
  for (int i = 0; i < o.increments; ++i) {
    pause(random, o.work);
    const std::int64_t at = now_ns();
    if (const std::int64_t deadline = blocking_lease_deadline(lock, at)) {
      hold_event(o, "ok", "lease", hold, name).with("lease_deadline", deadline).with("source", "valid_for").emit();
    }
    hold_event(o, "ok", "work", hold, name).emit();
  }
  hold_event(o, "invoke", "release", hold, name).emit();
  std::error_code ec;
  lock.unlock(ec);
  event released = hold_event(o, ec ? "fail" : "ok", "unlock", hold, name);
  if (ec) released.with("error", ec.message());
  released.emit();
  return true;
}

// A red lock over every server's client: the same name on each, a majority held counts.
void red_worker(const workload_options& o, int w, std::vector<std::unique_ptr<deadbolt::blocking_client>>& clients,
                hold_table& holds, const std::atomic<bool>& stop) {
  const std::string name = lock_of(o, w);
  std::vector<deadbolt::blocking_lock> members;
  for (auto& c : clients) members.push_back(c->lock(name));
  deadbolt::blocking_red_lock lock(std::move(members));
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".x" + std::to_string(w) + "." + std::to_string(n);
    if (!hold_composite(o, lock, "red", hold, name, "", holds, random)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    pause(random, o.think);
  }
}

// Two locks, `<lock>-a` and `<lock>-b`: even workers take both at once (a multi lock), odd workers
// one of them alone, in turn. A multi lock's hold is checked with each of its locks.
void multi_worker(const workload_options& o, int w, deadbolt::blocking_client& client, hold_table& holds,
                  const std::atomic<bool>& stop) {
  const std::string a = o.lock + "-a", b = o.lock + "-b";
  deadbolt::blocking_multi_lock both({client.lock(a), client.lock(b)});
  auto lock_a = client.lock(a), lock_b = client.lock(b);
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".m" + std::to_string(w) + "." + std::to_string(n);
    bool ok = true;
    if (w % 2 == 0) {
      ok = hold_composite(o, both, "multi", hold, a, a + "," + b, holds, random);
    } else {
      const bool first = n % 2 == 0;
      ok = hold_half(o, first ? lock_a : lock_b, "multi", nullptr, hold, first ? a : b, holds, random);
    }
    if (!ok) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    pause(random, o.think);
  }
}

template <typename Worker>
void run_threads(const workload_options& o, Worker worker) {
  std::vector<std::thread> threads;
  for (int w = 0; w < o.workers; ++w) threads.emplace_back([&, w] { worker(w); });
  for (auto& t : threads) t.join();
}

}  // namespace

void run_semaphore(const workload_options& o, deadbolt::blocking_client& client, const std::atomic<bool>& stop) {
  // Every client sets the permits; only the first time counts (RSemaphore.trySetPermits).
  for (int l = 0; l < o.locks; ++l) {
    std::error_code ec;
    client.semaphore(lock_of(o, l)).try_set_permits(o.permits, ec);
  }
  run_threads(o, [&](int w) { semaphore_worker(o, w, client, stop); });
}

void run_read_write(const workload_options& o, deadbolt::blocking_client& client, hold_table& holds,
                    const std::atomic<bool>& stop) {
  run_threads(o, [&](int w) { read_write_worker(o, w, client, holds, stop); });
}

void run_fair(const workload_options& o, deadbolt::blocking_client& client, hold_table& holds,
              const std::atomic<bool>& stop) {
  run_threads(o, [&](int w) { fair_worker(o, w, client, holds, stop); });
}

void run_multi(const workload_options& o, deadbolt::blocking_client& client, hold_table& holds,
               const std::atomic<bool>& stop) {
  run_threads(o, [&](int w) { multi_worker(o, w, client, holds, stop); });
}

void run_red(const workload_options& o, std::vector<std::unique_ptr<deadbolt::blocking_client>>& clients,
             hold_table& holds, const std::atomic<bool>& stop) {
  run_threads(o, [&](int w) { red_worker(o, w, clients, holds, stop); });
}

}  // namespace verify
