// lock_contended (P2): threads on the blocking API contend for one lock with lock() / unlock() (a fixed
// lease, so the watchdog sends nothing) for a fixed time. Counts acquisitions per second against P1's
// limit (redis-benchmark -c 1 -P 1 EVALSHA rate / 2), and acquire-script runs per acquisition from the
// server's INFO commandstats. First with one blocking_client shared by the threads (the headline
// figures), then with one blocking_client per thread, then one thread alone (the blocking API's own
// ceiling, without contention). Prints one summary line last:
//   lock_contended ratio=… attempts_per_acquisition=… acquisitions_per_s=… raw_evalsha_per_s=… threads=…
//                  clients=shared fairness=… per_thread_ratio=… per_thread_attempts_per_acquisition=…
//                  per_thread_acquisitions_per_s=… per_thread_fairness=… single_thread_ratio=…
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

constexpr const char* bench_name = "lock_contended";
const std::string lock_name = "bench-contended";

struct run_result {
  double acquisitions_per_s = 0;
  std::uint64_t acquisitions = 0;
  std::uint64_t acquire_scripts = 0;  // acquire-script runs on the server
  double fairness = 0;                // fewest / most acquisitions of one thread
  std::string per_thread;             // acquisitions of each thread, for the progress line
};

// Every thread: lock(lease); unlock(); until told to stop. Time runs from the start signal until the
// last thread has finished its last unlock.
run_result contend(deadbolt::bench::server_probe& probe, const deadbolt::config& cfg, int threads, bool shared,
                   double seconds, long lease_ms) {
  std::vector<std::unique_ptr<deadbolt::blocking_client>> clients;
  for (int i = 0; i < (shared ? 1 : threads); ++i) {
    clients.push_back(std::make_unique<deadbolt::blocking_client>(cfg));
    if (auto ec = clients.back()->connect()) deadbolt::bench::die(bench_name, "connect: " + ec.message());
  }
  std::atomic<int> ready{0};
  std::atomic<bool> go{false}, stop{false};
  std::vector<std::uint64_t> counts(static_cast<std::size_t>(threads), 0);
  std::vector<std::string> errors(static_cast<std::size_t>(threads));
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      deadbolt::blocking_lock lock = clients[shared ? 0 : static_cast<std::size_t>(t)]->lock(lock_name);
      std::uint64_t n = 0;
      ++ready;
      while (!go.load()) std::this_thread::yield();
      while (!stop.load(std::memory_order_relaxed)) {
        std::error_code ec;
        lock.lock(std::chrono::milliseconds(lease_ms), ec);
        if (ec) {
          errors[static_cast<std::size_t>(t)] = "lock: " + ec.message();
          break;
        }
        ++n;
        lock.unlock(ec);
        if (ec) {
          errors[static_cast<std::size_t>(t)] = "unlock: " + ec.message();
          break;
        }
      }
      counts[static_cast<std::size_t>(t)] = n;
    });
  }
  while (ready.load() < threads) std::this_thread::yield();
  const deadbolt::bench::command_counts before = probe.commandstats();
  const auto start = deadbolt::bench::clock_type::now();
  go = true;
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& w : workers) w.join();
  const double elapsed = deadbolt::bench::seconds_since(start);
  const deadbolt::bench::command_counts after = probe.commandstats();
  for (const auto& e : errors) {
    if (!e.empty()) deadbolt::bench::die(bench_name, e);
  }

  run_result r;
  for (auto n : counts) r.acquisitions += n;
  if (r.acquisitions == 0) deadbolt::bench::die(bench_name, "no acquisitions");
  // Script runs on the server: EVALSHA (EVAL after a NOSCRIPT) of acquire and unlock; every
  // acquisition was unlocked once, and nothing else runs a script here (fixed lease: no renewal).
  const std::uint64_t scripts = deadbolt::bench::delta(before, after, "evalsha") +
                                deadbolt::bench::delta(before, after, "eval");
  const std::uint64_t publishes = deadbolt::bench::delta(before, after, "publish");
  if (publishes != r.acquisitions) {
    std::fprintf(stderr, "%s: warning: %llu unlock messages for %llu acquisitions\n", bench_name,
                 static_cast<unsigned long long>(publishes), static_cast<unsigned long long>(r.acquisitions));
  }
  r.acquire_scripts = scripts - r.acquisitions;
  r.acquisitions_per_s = static_cast<double>(r.acquisitions) / elapsed;
  for (auto n : counts) r.per_thread += (r.per_thread.empty() ? "" : "/") + std::to_string(n);
  r.fairness = static_cast<double>(*std::min_element(counts.begin(), counts.end())) /
               static_cast<double>(*std::max_element(counts.begin(), counts.end()));
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long rounds = opt.get("rounds", 5L);
  const int threads = static_cast<int>(opt.get("threads", 4L));
  const double seconds = static_cast<double>(opt.get("ms", 1500L)) / 1000.0;
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);

  std::fprintf(stderr, "%s: %ld rounds of: %d threads for %.1f s on one shared client, then on a client each, "
               "then one thread alone; %ld ms lease; raw c1P1 (%ld requests) before and after each round\n",
               bench_name, rounds, threads, seconds, lease_ms, raw_requests);
  // Every round's client phases are bracketed by raw measurements (the one after a round is the one
  // before the next); the round's limit is their mean / 2.
  double raw_before = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  std::vector<double> raws, shared_ratios, own_ratios, single_ratios;
  std::vector<run_result> shared, own;
  std::uint64_t shared_acq = 0, shared_scripts = 0, own_acq = 0, own_scripts = 0;
  for (long r = 0; r < rounds; ++r) {
    const run_result s = contend(probe, cfg, threads, true, seconds, lease_ms);
    const run_result o = contend(probe, cfg, threads, false, seconds, lease_ms);
    const run_result one = contend(probe, cfg, 1, true, seconds / 2, lease_ms);
    const double raw_after = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    shared.push_back(s);
    own.push_back(o);
    shared_ratios.push_back(s.acquisitions_per_s / (raw_r / 2));
    own_ratios.push_back(o.acquisitions_per_s / (raw_r / 2));
    single_ratios.push_back(one.acquisitions_per_s / (raw_r / 2));
    shared_acq += s.acquisitions;
    shared_scripts += s.acquire_scripts;
    own_acq += o.acquisitions;
    own_scripts += o.acquire_scripts;
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s; shared client %.0f acquisitions/s, ratio %.3f, %.3f "
                 "attempts each, per thread %s; a client per thread %.0f acquisitions/s, ratio %.3f, %.3f attempts "
                 "each, per thread %s; one thread alone %.0f acquisitions/s, ratio %.3f\n",
                 bench_name, r + 1, raw_r, s.acquisitions_per_s, shared_ratios.back(),
                 static_cast<double>(s.acquire_scripts) / static_cast<double>(s.acquisitions), s.per_thread.c_str(),
                 o.acquisitions_per_s, own_ratios.back(),
                 static_cast<double>(o.acquire_scripts) / static_cast<double>(o.acquisitions), o.per_thread.c_str(),
                 one.acquisitions_per_s, single_ratios.back());
  }
  const std::size_t m = deadbolt::bench::median_index(shared_ratios);
  const std::size_t o = deadbolt::bench::median_index(own_ratios);
  std::printf("%s ratio=%.3f attempts_per_acquisition=%.3f acquisitions_per_s=%.0f raw_evalsha_per_s=%.0f threads=%d "
              "clients=shared fairness=%.2f per_thread_ratio=%.3f per_thread_attempts_per_acquisition=%.3f "
              "per_thread_acquisitions_per_s=%.0f per_thread_fairness=%.2f single_thread_ratio=%.3f\n",
              bench_name, shared_ratios[m], static_cast<double>(shared_scripts) / static_cast<double>(shared_acq),
              shared[m].acquisitions_per_s, raws[m], threads, shared[m].fairness, own_ratios[o],
              static_cast<double>(own_scripts) / static_cast<double>(own_acq), own[o].acquisitions_per_s,
              own[o].fairness, single_ratios[deadbolt::bench::median_index(single_ratios)]);
  return 0;
}
