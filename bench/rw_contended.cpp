// rw_contended: reader threads take and release the read half of one read/write lock on one shared
// blocking_client, while one writer thread (a client of its own) takes and releases the write half,
// for a fixed time. Reads per second against the raw limit (redis-benchmark -c 1 -P 1 EVALSHA rate / 2,
// a read pair being two scripts), and the writer's share. Prints one summary line last:
//   rw_contended ratio=… reads_per_s=… writes_per_s=… raw_evalsha_per_s=… readers=… extra_attempts_per_acquisition=…
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <thread>
#include <vector>

#include "deadbolt/blocking.hpp"
#include "server_probe.hpp"

namespace {

constexpr const char* bench_name = "rw_contended";
const std::string lock_name = "bench-rw";

struct run_result {
  double reads_per_s = 0;
  double writes_per_s = 0;
  double read_attempts_per_read = 0;
};

run_result contend(deadbolt::bench::server_probe& probe, const deadbolt::config& cfg, int readers, double seconds,
                   long lease_ms) {
  deadbolt::blocking_client shared(cfg), own(cfg);
  if (auto ec = shared.connect()) deadbolt::bench::die(bench_name, "connect: " + ec.message());
  if (auto ec = own.connect()) deadbolt::bench::die(bench_name, "connect: " + ec.message());
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false};
  std::atomic<std::uint64_t> reads{0}, writes{0};
  std::vector<std::string> errors(static_cast<std::size_t>(readers) + 1);
  const std::chrono::milliseconds lease(lease_ms);
  auto loop = [&](auto lock, std::atomic<std::uint64_t>& count, std::string& error) {  // a read or write half
    ++ready;
    while (!go.load()) std::this_thread::yield();
    while (!stop.load(std::memory_order_relaxed)) {
      std::error_code ec;
      lock.lock(lease, ec);
      if (ec) return void(error = "lock: " + ec.message());
      ++count;
      lock.unlock(ec);
      if (ec) return void(error = "unlock: " + ec.message());
    }
  };
  std::vector<std::thread> threads;
  for (int t = 0; t < readers; ++t) {
    threads.emplace_back([&, t] { loop(shared.read_write_lock(lock_name).read(), reads, errors[static_cast<std::size_t>(t)]); });
  }
  threads.emplace_back([&] { loop(own.read_write_lock(lock_name).write(), writes, errors.back()); });
  while (ready.load() < readers + 1) std::this_thread::yield();
  const deadbolt::bench::command_counts before = probe.commandstats();
  const auto start = deadbolt::bench::clock_type::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& t : threads) t.join();
  const double elapsed = deadbolt::bench::seconds_since(start);
  const deadbolt::bench::command_counts after = probe.commandstats();
  for (const auto& e : errors) {
    if (!e.empty()) deadbolt::bench::die(bench_name, e);
  }
  if (reads.load() == 0) deadbolt::bench::die(bench_name, "no reads");
  // Every acquisition was released once; the other script runs are acquire attempts.
  const std::uint64_t scripts = deadbolt::bench::delta(before, after, "evalsha") + deadbolt::bench::delta(before, after, "eval");
  const std::uint64_t pairs = reads.load() + writes.load();
  run_result r;
  r.reads_per_s = static_cast<double>(reads.load()) / elapsed;
  r.writes_per_s = static_cast<double>(writes.load()) / elapsed;
  r.read_attempts_per_read = static_cast<double>(scripts - pairs) / static_cast<double>(pairs);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long rounds = opt.get("rounds", 5L);
  const int readers = static_cast<int>(opt.get("readers", 4L));
  const double seconds = static_cast<double>(opt.get("ms", 1500L)) / 1000.0;
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  std::fprintf(stderr, "%s: %ld rounds of %d reader threads (one client) and one writer (its own client) for "
               "%.1f s; %ld ms lease; raw c1P1 (%ld requests) before and after each round\n",
               bench_name, rounds, readers, seconds, lease_ms, raw_requests);
  double raw_before = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  std::vector<double> raws, ratios;
  std::vector<run_result> runs;
  for (long r = 0; r < rounds; ++r) {
    const run_result x = contend(probe, cfg, readers, seconds, lease_ms);
    const double raw_after = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    runs.push_back(x);
    ratios.push_back(x.reads_per_s / (raw_r / 2));
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s; %.0f reads/s (ratio %.3f), %.0f writes/s, %.3f extra "
                 "attempts per acquisition\n",
                 bench_name, r + 1, raw_r, x.reads_per_s, ratios.back(), x.writes_per_s, x.read_attempts_per_read);
  }
  const std::size_t m = deadbolt::bench::median_index(ratios);
  std::printf("%s ratio=%.3f reads_per_s=%.0f writes_per_s=%.0f raw_evalsha_per_s=%.0f readers=%d "
              "extra_attempts_per_acquisition=%.3f\n",
              bench_name, ratios[m], runs[m].reads_per_s, runs[m].writes_per_s, raws[m], readers,
              runs[m].read_attempts_per_read);
  return 0;
}
