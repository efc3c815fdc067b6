// lock_many_cluster: lock_many on a Redis Cluster of three masters (bench/run starts it). One async
// client, 1000 distinct locks spread over the masters by their slots; each round starts all the
// acquisitions at once and unlocks each lock as soon as it is acquired. Compares pairs per second with
// the raw limit of the same cluster: redis-benchmark --cluster EVALSHA of the acquire script, -P 16,
// one client per master, rate / 2. Every round is bracketed by two raw runs. Prints one summary line:
//   lock_many_cluster ratio=… pairs_per_s=… raw_cluster_evalsha_p16_per_s=… allocs_per_pair=… locks=…
//                     masters=… locks_per_master=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "lock_rounds.hpp"
#include "server_probe.hpp"

namespace {

constexpr const char* bench_name = "lock_many_cluster";

std::vector<int> ports_of(const std::string& list) {
  std::vector<int> out;
  std::istringstream in(list);
  for (std::string p; std::getline(in, p, ',');) out.push_back(std::stoi(p));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const std::vector<int> ports = ports_of(opt.get("ports", std::string()));
  if (ports.empty()) deadbolt::bench::die(bench_name, "--ports P1,P2,... (the masters) is required");
  const long rounds = opt.get("rounds", 5L);
  const long lock_count = opt.get("locks", 1000L);
  const long warm = opt.get("warmup-rounds", 5L);
  const long measured = opt.get("measured-rounds", 40L);
  const long raw_requests = opt.get("raw-requests", 300000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  // The script must be known on every master (the client would load it itself after a NOSCRIPT).
  std::vector<std::unique_ptr<deadbolt::bench::server_probe>> probes;
  std::string sha;
  for (const int port : ports) {
    probes.push_back(std::make_unique<deadbolt::bench::server_probe>(bench_name, port));
    sha = probes.back()->load_acquire_script();
  }

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis+cluster://";
  for (std::size_t i = 0; i < ports.size(); ++i) cfg.url += (i ? ",127.0.0.1:" : "127.0.0.1:") + std::to_string(ports[i]);
  cfg.max_held_locks = std::max<std::size_t>(cfg.max_held_locks, static_cast<std::size_t>(lock_count));
  deadbolt::client client(io.get_executor(), cfg);
  std::vector<deadbolt::reentrant_lock> locks;
  locks.reserve(static_cast<std::size_t>(lock_count));
  for (long i = 0; i < lock_count; ++i) locks.push_back(client.lock("bench-many-" + std::to_string(i)));
  // How the locks spread: which master answers for each (asked with EXISTS, which a non-owner MOVEs).
  std::map<int, long> per_master;
  for (long i = 0; i < lock_count; i += 10) {
    for (std::size_t p = 0; p < probes.size(); ++p) {
      if (probes[p]->owns("bench-many-" + std::to_string(i))) ++per_master[ports[p]];
    }
  }
  std::string spread;
  for (const auto& [port, n] : per_master) spread += (spread.empty() ? "" : "/") + std::to_string(n * 10);

  std::fprintf(stderr, "%s: %ld rounds of: %ld + %ld rounds of %ld locks (about %s per master) with a %ld ms "
               "lease; raw redis-benchmark --cluster -c %zu -P 16 (%ld requests) before and after each round\n",
               bench_name, rounds, warm, measured, lock_count, spread.c_str(), lease_ms, ports.size(), raw_requests);
  const int clients = static_cast<int>(ports.size());  // one per master
  auto raw = [&] { return deadbolt::bench::raw_cluster_evalsha_per_s(ports[0], sha, clients, 16, raw_requests, 1000); };
  double raw_before = raw();
  std::vector<double> raws, ratios;
  std::vector<deadbolt::bench::run_result> results;
  std::size_t allocations = 0;
  for (long r = 0; r < rounds; ++r) {
    const deadbolt::bench::run_result a =
        deadbolt::bench::rounds_runner(bench_name, io, locks, std::chrono::milliseconds(lease_ms), warm, measured).run();
    const double raw_after = raw();
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    results.push_back(a);
    ratios.push_back(a.pairs_per_s / (raw_r / 2));
    allocations = std::max(allocations, a.allocations);
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s (cluster, P16), %.0f pairs/s, ratio %.3f, %zu allocs\n",
                 bench_name, r + 1, raw_r, a.pairs_per_s, ratios.back(), a.allocations);
  }
  const std::size_t m = deadbolt::bench::median_index(ratios);
  const double pairs = static_cast<double>(measured) * static_cast<double>(lock_count);
  std::printf("%s ratio=%.3f pairs_per_s=%.0f raw_cluster_evalsha_p16_per_s=%.0f allocs_per_pair=%.3f locks=%ld "
              "masters=%zu locks_per_master=%s\n",
              bench_name, ratios[m], results[m].pairs_per_s, raws[m], static_cast<double>(allocations) / pairs,
              lock_count, ports.size(), spread.c_str());
  return 0;
}
