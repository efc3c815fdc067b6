// renewal (P6): one async client holds 10,000 locks under the watchdog (no lease; a short
// watchdog_timeout so that ticks, every third of it, come quickly). Measures the client's heap per held
// lock, the renewal commands per watchdog tick and the keys each carries (from the server's INFO
// commandstats), and samples the locks' TTLs on the server between ticks. Prints one summary line last:
//   renewal bytes_per_lock=… commands_per_tick=… keys_per_command=… locks=… slot_bytes=… held_bytes_per_lock=…
//           ticks=… ttl_min_ms=… ttl_max_ms=… lease_ms=… ttl_missing=… lost=… server_ms_per_tick=…
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "server_probe.hpp"

namespace {

using namespace std::chrono_literals;
using deadbolt::bench::clock_type;
constexpr const char* bench_name = "renewal";
constexpr deadbolt::owner_id owner = 1;

std::string lock_name(long i) {
  char name[48];
  std::snprintf(name, sizeof name, "bench-renewal-%05ld", i);
  return name;
}

void wait_until(const std::atomic<long>& value, long target, const char* what) {
  const auto limit = clock_type::now() + 60s;
  while (value.load() < target) {
    if (clock_type::now() > limit) deadbolt::bench::die(bench_name, std::string("timed out waiting for ") + what);
    std::this_thread::sleep_for(1ms);
  }
}

// Runs on the io thread: acquires (or unlocks) locks [first, last) with at most `window` operations in
// flight; `done` counts completions, `failed` errors. The lock objects live only as long as their
// operations: what stays is the client's own record of each hold.
class windowed {
 public:
  windowed(deadbolt::client& client, long first, long last, long window, bool unlock)
      : client_(client), next_(first), last_(last), window_(window), unlock_(unlock) {}
  void start() {
    for (long i = 0; i < window_ && next_ < last_; ++i) launch();
  }
  std::atomic<long> done{0};
  std::atomic<long> failed{0};

 private:
  void launch() {
    deadbolt::reentrant_lock lock = client_.lock(lock_name(next_++));
    auto finish = [this](std::error_code ec) {
      if (ec) {
        std::fprintf(stderr, "%s: %s: %s\n", bench_name, unlock_ ? "unlock" : "lock", ec.message().c_str());
        ++failed;
      }
      ++done;
      if (next_ < last_) launch();
    };
    if (unlock_) {
      lock.async_unlock(owner, finish);
    } else {
      lock.async_lock(owner, finish);  // no lease: the watchdog keeps it
    }
  }

  deadbolt::client& client_;
  long next_, last_, window_;
  bool unlock_;
};

// Acquires (or releases) [first, last) on the io thread and waits for the end.
void run_windowed(asio::io_context& io, deadbolt::client& client, long first, long last, long window, bool unlock) {
  windowed w(client, first, last, window, unlock);
  asio::post(io, [&w] { w.start(); });
  wait_until(w.done, last - first, unlock ? "unlocks" : "acquisitions");
  if (w.failed.load() != 0) deadbolt::bench::die(bench_name, "operations failed");
}

struct client_under_test {
  std::unique_ptr<deadbolt::client> client;
  std::size_t heap_growth = 0;  // from building it to connected and warmed up
};

// Builds a client, connects it, and warms it up: acquires and releases `window` locks with `window` in
// flight, so its operation pools and pipeline buffers have grown to what the measured phase uses.
client_under_test make_client(asio::io_context& io, const deadbolt::config& cfg, long window) {
  const std::size_t before = deadbolt::bench::heap_bytes_in_use();
  client_under_test c;
  c.client = std::make_unique<deadbolt::client>(io.get_executor(), cfg);
  std::atomic<long> connected{0};
  std::error_code error;
  c.client->async_connect([&](std::error_code ec) {
    error = ec;
    ++connected;
  });
  wait_until(connected, 1, "the connection");
  if (error) deadbolt::bench::die(bench_name, "connect: " + error.message());
  run_windowed(io, *c.client, 0, window, window, false);
  run_windowed(io, *c.client, 0, window, window, true);
  std::this_thread::sleep_for(50ms);  // the latch DELs after the last unlocks
  c.heap_growth = deadbolt::bench::heap_bytes_in_use() - before;
  return c;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long locks = opt.get("locks", 10000L);
  const long window = opt.get("window", 100L);
  const long watchdog_ms = opt.get("watchdog-ms", 3000L);
  const long ticks = opt.get("ticks", 6L);
  const long ttl_samples_per_poll = opt.get("ttl-samples", 10L);

  deadbolt::bench::server_probe probe(bench_name, port);
  // Cached on the server up front: otherwise the first client's first calls come back NOSCRIPT and are
  // sent again with the script's body, which grows that client's buffers and not the other's.
  namespace scripts = deadbolt::detail::scripts;
  for (const auto* script : {&scripts::lock_acquire, &scripts::lock_unlock, &scripts::lock_renew}) {
    probe.load_script(*script);
  }
  asio::io_context io(1);
  auto work = asio::make_work_guard(io);
  std::thread io_thread([&io] { io.run(); });

  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  cfg.watchdog_timeout = std::chrono::milliseconds(watchdog_ms);
  std::atomic<long> lost{0};

  // The fixed part of a client (connections, buffers, pools) with a table of `window` slots, to be
  // taken away from the big client's growth: what is left is the per-slot cost of the held-lock table.
  cfg.max_held_locks = static_cast<std::size_t>(window);
  client_under_test small = make_client(io, cfg, window);
  cfg.max_held_locks = static_cast<std::size_t>(locks);
  client_under_test big = make_client(io, cfg, window);
  big.client->on_lease_lost([&lost](std::string_view, std::int64_t) { ++lost; });
  small.client.reset();

  std::fprintf(stderr, "%s: client with %ld slots: %zu heap bytes; with %ld slots: %zu; acquiring %ld locks, "
               "%ld at a time, watchdog %ld ms\n", bench_name, window, small.heap_growth, locks, big.heap_growth,
               locks, window, watchdog_ms);
  std::this_thread::sleep_for(100ms);
  const std::size_t before_acquiring = deadbolt::bench::heap_bytes_in_use();
  const auto acquire_start = clock_type::now();
  run_windowed(io, *big.client, 0, locks, window, false);
  const double acquire_s = deadbolt::bench::seconds_since(acquire_start);
  const std::size_t just_acquired = deadbolt::bench::heap_bytes_in_use();

  // Watchdog ticks: poll commandstats; a tick is a burst of renewal EVALSHAs (nothing else runs a script
  // now), separated from the next by far more than the polling interval.
  const long tick_ms = watchdog_ms / 3;
  const auto poll = std::chrono::milliseconds(std::max(5L, tick_ms / 50));
  std::vector<std::uint64_t> per_tick;
  deadbolt::bench::command_counts first = probe.commandstats(), prev = first;
  auto last_increase = clock_type::now() - 1h;
  long long ttl_min = -1, ttl_max = -1, missing = 0;
  long sample = 0;
  std::size_t peak = just_acquired;  // the heap's peak under the watchdog, sampled at every poll
  const auto deadline = clock_type::now() + std::chrono::milliseconds(tick_ms * (ticks + 3));
  // Skip the partial first tick if one is under way: start counting after a quiet gap.
  bool counting = false;
  auto quiet_since = clock_type::now();
  while (static_cast<long>(per_tick.size()) < ticks + 1) {
    if (clock_type::now() > deadline) deadbolt::bench::die(bench_name, "too few watchdog ticks seen");
    std::this_thread::sleep_for(poll);
    peak = std::max(peak, deadbolt::bench::heap_bytes_in_use());
    const deadbolt::bench::command_counts now = probe.commandstats();
    const std::uint64_t renewals = deadbolt::bench::delta(prev, now, "evalsha");
    const auto t = clock_type::now();
    if (!counting) {
      if (renewals != 0) quiet_since = t;
      if (t - quiet_since > std::chrono::milliseconds(tick_ms / 4)) {
        counting = true;
        first = now;
      }
    } else if (renewals != 0) {
      if (t - last_increase > std::chrono::milliseconds(tick_ms / 2)) per_tick.push_back(0);
      per_tick.back() += renewals;
      last_increase = t;
    }
    prev = now;
    // TTLs between and during ticks, across all the locks.
    for (long i = 0; i < ttl_samples_per_poll; ++i, sample += 997) {
      const long long ttl = probe.pttl(lock_name(sample % locks));
      if (ttl < 0) {
        ++missing;
        continue;
      }
      ttl_min = ttl_min < 0 ? ttl : std::min(ttl_min, ttl);
      ttl_max = std::max(ttl_max, ttl);
    }
  }
  // The last burst may be incomplete: count whole ticks only.
  per_tick.pop_back();
  std::uint64_t renew_commands = 0;
  for (auto n : per_tick) renew_commands += n;
  // Keys per renewal command: the renew script runs HEXISTS once per key (redis.pcall is counted too).
  const deadbolt::bench::command_counts end = probe.commandstats();
  const deadbolt::bench::command_stat renew_stat = deadbolt::bench::delta_stat(first, end, "evalsha");
  const double keys_per_command = static_cast<double>(deadbolt::bench::delta(first, end, "hexists")) /
                                  static_cast<double>(renew_stat.calls);
  const double commands_per_tick = static_cast<double>(renew_commands) / static_cast<double>(per_tick.size());
  // The server's time in the renewal scripts per tick: it serves nobody else meanwhile.
  const double server_ms_per_tick =
      static_cast<double>(renew_stat.usec) / static_cast<double>(renew_stat.calls) * commands_per_tick / 1000;
  const std::uint64_t tick_min = *std::min_element(per_tick.begin(), per_tick.end());
  const std::uint64_t tick_max = *std::max_element(per_tick.begin(), per_tick.end());

  // Per lock: the table slot (the big client's growth beyond the small one's, per extra slot) plus
  // what holding it costs (growth from before acquiring to the peak under the watchdog).
  const double slot_bytes = (static_cast<double>(big.heap_growth) - static_cast<double>(small.heap_growth)) /
                            static_cast<double>(locks - window);
  const double held_bytes = (static_cast<double>(peak) - static_cast<double>(before_acquiring)) /
                            static_cast<double>(locks);
  const double acquired_bytes = (static_cast<double>(just_acquired) - static_cast<double>(before_acquiring)) /
                                static_cast<double>(locks);
  std::fprintf(stderr, "%s: acquired in %.2f s; ticks %zu, renewal commands per tick %llu..%llu; heap growth per "
               "lock: %.1f right after acquiring, %.1f at the peak under the watchdog; table slot %.1f\n", bench_name, acquire_s,
               per_tick.size(), static_cast<unsigned long long>(tick_min), static_cast<unsigned long long>(tick_max),
               acquired_bytes, held_bytes, slot_bytes);

  run_windowed(io, *big.client, 0, locks, window, true);
  big.client.reset();
  work.reset();
  io_thread.join();

  std::printf("renewal bytes_per_lock=%.0f commands_per_tick=%.1f keys_per_command=%.1f locks=%ld "
              "slot_bytes=%.0f held_bytes_per_lock=%.0f ticks=%zu ttl_min_ms=%lld ttl_max_ms=%lld lease_ms=%ld "
              "ttl_missing=%lld lost=%ld server_ms_per_tick=%.1f\n",
              slot_bytes + held_bytes, commands_per_tick, keys_per_command, locks, slot_bytes, held_bytes,
              per_tick.size(), ttl_min, ttl_max, watchdog_ms, missing, lost.load(), server_ms_per_tick);
  return 0;
}
