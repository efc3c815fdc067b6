// lock_contended (P2): threads on the blocking API contend for one lock with lock() / unlock() (a fixed
// lease, so the watchdog sends nothing). Counts acquisitions per second against P1's limit (the c1P1
// EVALSHA rate / 2), and acquire-script runs per acquisition from the server's INFO commandstats. Each
// slice runs three phases of --slice-ms: one blocking_client shared by the threads (the headline
// figures), one blocking_client per thread, one thread alone (the blocking API's own ceiling, without
// contention); every phase sits between two raw slices (EVALSHA c1P1 through hiredis) and is compared
// with their mean, so a machine whose speed drifts gives stable ratios. The medians over the slices:
//   lock_contended ratio=… ratio_p25=… ratio_p75=… slices=… attempts_per_acquisition=… acquisitions_per_s=…
//                  raw_evalsha_per_s=… redis_benchmark_evalsha_per_s=… threads=… clients=shared fairness=…
//                  per_thread_ratio=… per_thread_attempts_per_acquisition=… per_thread_acquisitions_per_s=…
//                  per_thread_fairness=… single_thread_ratio=…
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

// The ratios of one phase across the slices: each slice against the mean of the raw slices on its sides.
struct phase {
  std::vector<double> ratios;
  std::vector<run_result> runs;
  std::uint64_t acquisitions = 0, acquire_scripts = 0;
  void add(const run_result& r, double raw_per_s) {
    runs.push_back(r);
    ratios.push_back(r.acquisitions_per_s / (raw_per_s / 2));
    acquisitions += r.acquisitions;
    acquire_scripts += r.acquire_scripts;
  }
  const run_result& median_run() const { return runs[deadbolt::bench::median_index(ratios)]; }
  double median() const { return ratios[deadbolt::bench::median_index(ratios)]; }
  double quantile(double q) const {
    std::vector<double> v = ratios;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  }
  double attempts() const { return static_cast<double>(acquire_scripts) / static_cast<double>(acquisitions); }
};

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long slices = opt.get("slices", 20L);
  const int threads = static_cast<int>(opt.get("threads", 4L));
  const double slice_s = static_cast<double>(opt.get("slice-ms", 400L)) / 1000.0;
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);

  std::fprintf(stderr, "%s: %ld slices of: %d threads for %.0f ms on one shared client, then on a client each, then "
               "one thread alone, each phase between two raw slices (EVALSHA c1P1 through hiredis); %ld ms lease\n",
               bench_name, slices, threads, slice_s * 1000, lease_ms);
  // redis-benchmark once, for reference: the in-process raw slices should agree with it.
  const double redis_benchmark = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  const std::string raw_key = "bench-contended-raw", raw_owner = "owner:1", raw_lease = std::to_string(lease_ms);
  auto raw = [&] { return probe.raw_slice_per_s(sha, raw_key, raw_lease, raw_owner, slice_s); };
  phase shared, own, single;
  std::vector<double> raws;
  double raw_before = raw();
  for (long i = 0; i < slices; ++i) {
    const run_result s = contend(probe, cfg, threads, true, slice_s, lease_ms);
    const double raw_1 = raw();
    const run_result o = contend(probe, cfg, threads, false, slice_s, lease_ms);
    const double raw_2 = raw();
    const run_result one = contend(probe, cfg, 1, true, slice_s, lease_ms);
    const double raw_3 = raw();
    shared.add(s, (raw_before + raw_1) / 2);
    own.add(o, (raw_1 + raw_2) / 2);
    single.add(one, (raw_2 + raw_3) / 2);
    for (double r : {raw_before, raw_1, raw_2}) raws.push_back(r);
    raw_before = raw_3;
    std::fprintf(stderr, "%s: slice %ld: shared client ratio %.3f (%.0f/s, per thread %s), a client per thread ratio "
                 "%.3f (%.0f/s, per thread %s), one thread alone ratio %.3f; raw %.0f %.0f %.0f %.0f EVALSHA/s\n",
                 bench_name, i + 1, shared.ratios.back(), s.acquisitions_per_s, s.per_thread.c_str(),
                 own.ratios.back(), o.acquisitions_per_s, o.per_thread.c_str(), single.ratios.back(),
                 raws[raws.size() - 3], raw_1, raw_2, raw_3);
  }
  probe.del(raw_key);
  std::printf("%s ratio=%.3f ratio_p25=%.3f ratio_p75=%.3f slices=%ld attempts_per_acquisition=%.3f "
              "acquisitions_per_s=%.0f raw_evalsha_per_s=%.0f redis_benchmark_evalsha_per_s=%.0f threads=%d "
              "clients=shared fairness=%.2f per_thread_ratio=%.3f per_thread_attempts_per_acquisition=%.3f "
              "per_thread_acquisitions_per_s=%.0f per_thread_fairness=%.2f single_thread_ratio=%.3f\n",
              bench_name, shared.median(), shared.quantile(0.25), shared.quantile(0.75), slices, shared.attempts(),
              shared.median_run().acquisitions_per_s, raws[deadbolt::bench::median_index(raws)], redis_benchmark,
              threads, shared.median_run().fairness, own.median(), own.attempts(), own.median_run().acquisitions_per_s,
              own.median_run().fairness, single.median());
  return 0;
}
