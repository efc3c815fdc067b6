// The mutex workload through the blocking API: one thread per worker, all on one blocking_client.
#include <future>
#include <random>
#include <thread>
#include <vector>

#include <deadbolt/blocking.hpp>
#include <deadbolt/port/hooks.hpp>

#include "history.hpp"
#include "lease_probe.hpp"
#include "workload.hpp"

namespace verify {
namespace {

store_result wait_for(const std::function<void(fenced_store::handler)>& start) {
  std::promise<store_result> done;
  auto result = done.get_future();
  start([&done](store_result r) { done.set_value(std::move(r)); });
  return result.get();
}

/// Records a store operation's invoke and outcome; true when the store accepted it.
bool fenced_step(const workload_options& o, fenced_store& store, const std::string& hold, const std::string& name,
                 const std::string& writer, const char* f, std::uint64_t token, std::int64_t& value) {
  event invoke(o.process, "invoke", f);
  invoke.with("hold", hold).with("lock", name).with("token", token).with("writer", writer);
  const bool is_write = f[0] == 'w';
  if (is_write) invoke.with("value", value);
  invoke.emit();
  const std::string key = register_of(name);
  const store_result r = wait_for([&](fenced_store::handler h) {
    if (is_write) store.write(key, token, writer, value, std::move(h));
    else store.read(key, token, writer, std::move(h));
  });
  event done(o.process, r.outcome == store_result::accepted ? "ok" : r.outcome == store_result::stale ? "fail" : "info", f);
  done.with("hold", hold).with("lock", name).with("token", token).with("value", is_write ? value : r.value);
  if (r.outcome == store_result::stale) done.with("error", "stale");
  if (r.outcome == store_result::unknown) done.with("error", r.error);
  done.emit();
  if (r.outcome == store_result::accepted && !is_write) value = r.value;
  return r.outcome == store_result::accepted;
}

template <typename Lock>
void record_lease(const workload_options& o, Lock& lock, const std::string& hold, const std::string& name) {
  const std::int64_t asked = now_ns();
  if (const std::int64_t deadline = blocking_lease_deadline(lock, asked)) {
    event(o.process, "ok", "lease").with("hold", hold).with("lock", name).with("lease_deadline", deadline)
        .with("source", "valid_for").emit();
  }
}

void worker(const workload_options& o, int w, deadbolt::blocking_client& client, fenced_store& store,
            hold_table& holds, const std::atomic<bool>& stop) {
  const std::string name = lock_of(o, w);
  auto lock = client.fenced_lock(name);
  const auto owner = static_cast<std::int64_t>(deadbolt::port::thread_id());
  const std::string writer = writer_of(client.id(), owner);
  const auto lease = o.lease.count() > 0 ? o.lease : o.watchdog;
  std::minstd_rand random(static_cast<std::uint32_t>(now_ns() ^ (w * 7919)));
  for (int n = 1; !stop; ++n) {
    const std::string hold = o.process + ".b" + std::to_string(w) + "." + std::to_string(n);
    const std::int64_t asked = now_ns();
    event(o.process, "invoke", "acquire", asked).with("hold", hold).with("lock", name).with("api", "blocking")
        .with("deadline", asked + std::chrono::nanoseconds(o.wait).count())
        .with("lease_deadline", asked + std::chrono::nanoseconds(lease).count()).emit();
    std::error_code ec;
    holds.set(name, owner, hold);  // before the grant: a lease lost as it is confirmed still finds it
    const auto token = lock.try_lock_for(o.wait, o.lease, ec);
    if (ec || !token) {
      holds.clear(name, owner);
      event(o.process, "fail", "acquire").with("hold", hold).with("lock", name).with("error", ec ? ec.message() : "timeout").emit();
      if (ec) std::this_thread::sleep_for(std::chrono::milliseconds(100));  // the server is away: do not spin
      continue;
    }
    event(o.process, "ok", "acquire").with("hold", hold).with("lock", name).with("token", *token).emit();
    record_lease(o, lock, hold, name);
    for (int i = 0; i < o.increments; ++i) {
      std::int64_t value = 0;
      if (!fenced_step(o, store, hold, name, writer, "read", *token, value)) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(random() % (o.work.count() + 1)));
      record_lease(o, lock, hold, name);
      ++value;
      if (!fenced_step(o, store, hold, name, writer, "write", *token, value)) break;
    }
    event(o.process, "invoke", "release").with("hold", hold).with("lock", name).emit();
    lock.unlock(ec);
    holds.clear(name, owner);
    event unlocked(o.process, ec ? "fail" : "ok", "unlock");
    unlocked.with("hold", hold).with("lock", name);
    if (ec) unlocked.with("error", ec.message());
    unlocked.emit();
    if (o.think.count() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(random() % (o.think.count() + 1)));
  }
}

}  // namespace

void run_blocking(const workload_options& o, deadbolt::blocking_client& client, fenced_store& store,
                  hold_table& holds, const std::atomic<bool>& stop) {
  std::vector<std::thread> threads;
  for (int w = 0; w < o.workers; ++w) {
    threads.emplace_back([&, w] { worker(o, w, client, store, holds, stop); });
  }
  for (auto& t : threads) t.join();
}

}  // namespace verify
