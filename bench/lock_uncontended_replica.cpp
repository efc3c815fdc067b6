// lock_uncontended_replica: what replica sync's WAIT costs per lock+unlock pair with one replica (issue
// #13). lock_uncontended's fixed-lease pairs on a master that has one replica (bench/run starts both),
// on two clients of that master: one with config::replica_sync automatic (ROLE lists the replica, so
// every acquire and unlock script is followed by `WAIT 1 <timeout>` on the same connection) and one
// with it off. As in lock_uncontended, raw and client slices interleave (raw, synced, raw, unsynced,
// raw, ...), the raw ones EVALSHA of the acquire script c1P1 through hiredis on the master, and each
// client slice is compared with the mean of the raw slices on either side:
//   lock_uncontended_replica synced_pairs_per_s=… unsynced_pairs_per_s=… wait_cost_us_per_pair=…
//                            synced_ratio=… unsynced_ratio=… allocs_per_pair=… waits_per_pair=…
//                            unsynced_waits_per_pair=… wait_cost_round_trips_per_pair=…
//                            wait_cost_us_neighbours=… synced_ratio_p25=… synced_ratio_p75=…
//                            unsynced_ratio_p25=… unsynced_ratio_p75=…
//                            unsynced_allocs_per_pair=… slices=… raw_evalsha_per_s=…
//                            redis_benchmark_evalsha_per_s=… synced_client_cpu_us_per_pair=…
//                            unsynced_client_cpu_us_per_pair=…
// The machine's speed swings up to fourfold within seconds here, so rates measured at different
// moments do not compare: synced_pairs_per_s and unsynced_pairs_per_s are each mode's median ratio
// times the limit of the median raw slice (raw / 2), i.e. both at the run's median speed, and
// wait_cost_us_per_pair = 1e6 / synced - 1e6 / unsynced follows from them. wait_cost_round_trips_per_pair
// is the same in raw round trips (2 / synced_ratio - 2 / unsynced_ratio), which the speed cancels out
// of; wait_cost_us_neighbours, a cross-check, is the median of the differences between neighbouring
// synced and unsynced slices' measured rates (about a second apart).
// WAITs per pair are counted on the master (INFO commandstats): 2 with sync (one after each script), 0
// without; the benchmark fails if they are not, since it would not measure what it says.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "pair_chain.hpp"
#include "server_probe.hpp"

namespace {

constexpr const char* bench_name = "lock_uncontended_replica";
using deadbolt::bench::pair_chain;
using deadbolt::bench::pair_result;
using deadbolt::bench::slice_ratios;

// One client's side: its lock, its slices, and the WAITs the master counted during them.
struct mode {
  deadbolt::reentrant_lock lock;
  slice_ratios slices;
  std::uint64_t waits = 0;
  long pairs = 0;  // every pair the WAITs were counted over, the unmeasured ones too
  double waits_per_pair() const { return static_cast<double>(waits) / static_cast<double>(std::max(pairs, 1L)); }
};

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long slices = opt.get("slices", 24L);
  const double slice_s = static_cast<double>(opt.get("slice-ms", 400L)) / 1000;
  const long warm = opt.get("warmup", 2000L);
  const long slice_warm = opt.get("slice-warmup", 20L);
  const long raw_requests = opt.get("raw-requests", 50000L);
  const std::chrono::milliseconds lease(opt.get("lease-ms", 30000L));

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  cfg.replica_sync = deadbolt::replica_sync_mode::automatic;
  deadbolt::client synced_client(io.get_executor(), cfg);
  deadbolt::bench::connect_or_die(bench_name, io, synced_client);
  cfg.replica_sync = deadbolt::replica_sync_mode::off;
  deadbolt::client unsynced_client(io.get_executor(), cfg);
  deadbolt::bench::connect_or_die(bench_name, io, unsynced_client);
  mode synced{synced_client.lock("bench-uncontended-synced"), {}, 0, 0};
  mode unsynced{unsynced_client.lock("bench-uncontended-unsynced"), {}, 0, 0};

  std::fprintf(stderr, "%s: %ld slices of %.0f ms each with a %lld ms lease, with replica sync (WAIT 1 %lld after "
               "each script) and without, every one between two raw slices (EVALSHA c1P1 through hiredis); %ld "
               "warm-up pairs first\n",
               bench_name, slices, slice_s * 1000, static_cast<long long>(lease.count()),
               static_cast<long long>(cfg.replica_sync_timeout.count()), warm);
  // redis-benchmark once, for reference: the in-process raw slices should agree with it.
  const double redis_benchmark = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  pair_chain(bench_name, io, synced.lock, lease, warm, 0).run();
  pair_chain(bench_name, io, unsynced.lock, lease, warm, 0).run();

  const std::string raw_key = "bench-raw-slices", raw_owner = "owner:1", raw_lease = std::to_string(lease.count());
  deadbolt::bench::interleaved_slices slices_in_turn(
      [&] { return probe.raw_slice_per_s(sha, raw_key, raw_lease, raw_owner, slice_s); });
  auto client_slice = [&](mode& m) {
    return [&] {
      const deadbolt::bench::command_counts before = probe.commandstats();
      const pair_result r = pair_chain(bench_name, io, m.lock, lease, slice_warm, slice_s).run();
      m.waits += deadbolt::bench::delta(before, probe.commandstats(), "wait");
      m.pairs += r.pairs + slice_warm;  // the WAITs counted include the unmeasured pairs'
      return r;
    };
  };
  // The cost of WAIT from neighbouring slices too (about a second apart), where the drift is smallest.
  std::vector<double> neighbour_costs;
  for (long i = 0; i < slices; ++i) {
    const pair_result s = slices_in_turn.next(synced.slices, client_slice(synced));
    const pair_result u = slices_in_turn.next(unsynced.slices, client_slice(unsynced));
    neighbour_costs.push_back(1e6 / s.pairs_per_s - 1e6 / u.pairs_per_s);
    std::fprintf(stderr, "%s: slice %ld: synced %.0f pairs/s (limit %.0f), unsynced %.0f pairs/s (limit %.0f)\n",
                 bench_name, i + 1, s.pairs_per_s, synced.slices.limits.back(), u.pairs_per_s,
                 unsynced.slices.limits.back());
  }
  probe.del(raw_key);

  if (synced.waits != 2 * static_cast<std::uint64_t>(synced.pairs) || unsynced.waits != 0) {
    deadbolt::bench::die(bench_name, "the master counted " + std::to_string(synced.waits) + " WAITs over " +
                                         std::to_string(synced.pairs) + " synced pairs and " +
                                         std::to_string(unsynced.waits) + " over " + std::to_string(unsynced.pairs) +
                                         " unsynced ones (expected 2 per pair and none)");
  }
  const std::size_t sm = synced.slices.median(), um = unsynced.slices.median();
  const double raw_median = slices_in_turn.raw_median();
  const double synced_ratio = synced.slices.ratios[sm], unsynced_ratio = unsynced.slices.ratios[um];
  const double synced_rate = synced_ratio * raw_median / 2, unsynced_rate = unsynced_ratio * raw_median / 2;
  std::printf("%s synced_pairs_per_s=%.0f unsynced_pairs_per_s=%.0f wait_cost_us_per_pair=%.2f synced_ratio=%.3f "
              "unsynced_ratio=%.3f allocs_per_pair=%.3f waits_per_pair=%.2f unsynced_waits_per_pair=%.2f "
              "wait_cost_round_trips_per_pair=%.2f wait_cost_us_neighbours=%.2f synced_ratio_p25=%.3f "
              "synced_ratio_p75=%.3f unsynced_ratio_p25=%.3f unsynced_ratio_p75=%.3f unsynced_allocs_per_pair=%.3f "
              "slices=%ld raw_evalsha_per_s=%.0f "
              "redis_benchmark_evalsha_per_s=%.0f synced_client_cpu_us_per_pair=%.2f "
              "unsynced_client_cpu_us_per_pair=%.2f\n",
              bench_name, synced_rate, unsynced_rate, 1e6 / synced_rate - 1e6 / unsynced_rate,
              synced_ratio, unsynced_ratio, synced.slices.allocs_per_pair, synced.waits_per_pair(),
              unsynced.waits_per_pair(), 2 / synced_ratio - 2 / unsynced_ratio,
              neighbour_costs[deadbolt::bench::median_index(neighbour_costs)], synced.slices.quantile(0.25),
              synced.slices.quantile(0.75), unsynced.slices.quantile(0.25), unsynced.slices.quantile(0.75),
              unsynced.slices.allocs_per_pair, slices, raw_median, redis_benchmark,
              synced.slices.cpu_us_per_pair(sm), unsynced.slices.cpu_us_per_pair(um));
  return 0;
}
