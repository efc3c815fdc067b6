// lock_uncontended (P1): one owner on the async API chains lock -> unlock -> lock ... on one lock, the
// callbacks running on the io thread (this thread). Compares lock+unlock pairs per second with the raw
// limit of one unpipelined connection: EVALSHA of the acquire script one request at a time, whose
// rate / 2 is what a pair of round trips can reach. The machine's speed drifts within seconds, so raw
// and client run in short interleaved slices and each client slice is compared with the mean of the
// raw slices on either side; the summary gives the median of those ratios and their spread:
//   lock_uncontended ratio=… ratio_p25=… ratio_p75=… slices=… allocs_per_pair=… pairs_per_s=…
//                    raw_evalsha_per_s=… redis_benchmark_evalsha_per_s=… commands_per_pair=…
//                    client_cpu_us_per_pair=… watchdog_ratio=… watchdog_ratio_p25=… watchdog_ratio_p75=…
//                    watchdog_allocs_per_pair=… watchdog_pairs_per_s=…
//                    hooks_ratio=… hooks_ratio_p25=… hooks_ratio_p75=… hooks_allocs_per_pair=…
//                    hooks_pairs_per_s=… hook_events_per_pair=… blocking_ratio=… blocking_ratio_p25=…
//                    blocking_ratio_p75=… blocking_allocs_per_pair=… blocking_pairs_per_s=…
//                    protocol_ratio=… ratio_to_protocol=…
// The hooks side is the leased one on a second client whose config::metrics counts every event; the
// blocking side the same pairs through the blocking API (a blocking_client, this thread the caller).
// The protocol side is the same commands through hiredis (server_probe::raw_pair_slice_per_s): what the
// Redisson protocol's pair itself reaches against the acquire-only limit, and the client against it.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "alloc_counter.hpp"
#include "pair_chain.hpp"
#include "deadbolt/blocking.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "server_probe.hpp"

namespace {

using namespace std::chrono_literals;
using deadbolt::bench::clock_type;
using deadbolt::bench::pair_chain;
using deadbolt::bench::pair_result;
using deadbolt::bench::slice_ratios;
constexpr const char* bench_name = "lock_uncontended";

// A metrics hook that counts what the lock/unlock path reports (called on the io thread only).
class counting_metrics final : public deadbolt::metrics_hook {
 public:
  void on_acquire(const deadbolt::acquire_sample& s) override {
    ++events;
    waited_ns += s.waited.count();
  }
  void on_release(std::string_view, std::chrono::nanoseconds held) override {
    ++events;
    held_ns += held.count();
  }
  void on_renewal(std::size_t) override { ++events; }
  void on_table_use(deadbolt::table_kind, std::size_t, std::size_t) override { ++events; }
  long events = 0;
  std::int64_t waited_ns = 0, held_ns = 0;
};

// The same pairs through the blocking API, from this thread: try_lock_for(0, lease) -> unlock -> ...
// Allocations are counted on every thread (the caller's and the blocking client's loop).
pair_result blocking_pairs(deadbolt::blocking_lock& lock, std::chrono::milliseconds lease, long warm, double seconds) {
  std::error_code ec;
  auto pair = [&] {
    if (!lock.try_lock_for(0ms, lease, ec) || ec) {
      deadbolt::bench::die(bench_name, ec ? "blocking lock: " + ec.message() : "blocking lock: not acquired");
    }
    lock.unlock(ec);
    if (ec) deadbolt::bench::die(bench_name, "blocking unlock: " + ec.message());
  };
  for (long i = 0; i < warm; ++i) pair();
  deadbolt::bench::start_counting_allocations();
  const clock_type::time_point start = clock_type::now();
  const double cpu_start = deadbolt::bench::process_cpu_us();
  long pairs = 0;
  do {
    pair();
    ++pairs;
  } while (deadbolt::bench::seconds_since(start) < seconds);
  const std::size_t allocations = deadbolt::bench::stop_counting_allocations();
  const double elapsed = deadbolt::bench::seconds_since(start);
  return {static_cast<double>(pairs) / elapsed, allocations, deadbolt::bench::process_cpu_us() - cpu_start, pairs};
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  // --cluster-ports P1,P2,...: the same on a Redis Cluster (bench/run lock_uncontended_cluster). Every
  // key carries one hash tag, so all of it runs on one master, which the raw slices measure too.
  const std::string cluster_ports = opt.get("cluster-ports", std::string());
  const std::string tag = cluster_ports.empty() ? "" : "{bench-uncontended}";
  int port = static_cast<int>(opt.get("port", 0L));
  if (!cluster_ports.empty()) port = deadbolt::bench::cluster_node_serving(bench_name, cluster_ports, tag);
  const long slices = opt.get("slices", 24L);
  const double slice_s = static_cast<double>(opt.get("slice-ms", 400L)) / 1000;
  const long warm = opt.get("warmup", 2000L);
  const long slice_warm = opt.get("slice-warmup", 20L);
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();
  const std::string unlock_sha = probe.load_script(deadbolt::detail::scripts::lock_unlock);

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  if (!cluster_ports.empty()) cfg.url = deadbolt::bench::cluster_url(cluster_ports);
  deadbolt::client client(io.get_executor(), cfg);
  deadbolt::bench::connect_or_die(bench_name, io, client);
  const deadbolt::reentrant_lock lock = client.lock(tag + "bench-uncontended");
  // The same, on a client with a metrics hook (the log hook is not called on this path).
  auto metrics = std::make_shared<counting_metrics>();
  deadbolt::config hooked_cfg = cfg;
  hooked_cfg.metrics = metrics;
  hooked_cfg.log = [](deadbolt::log_level, std::string_view) {};
  deadbolt::client hooked_client(io.get_executor(), hooked_cfg);
  const deadbolt::reentrant_lock hooked_lock = hooked_client.lock(tag + "bench-uncontended-hooks");
  deadbolt::blocking_client blocking_client(cfg);
  if (const std::error_code ec = blocking_client.connect()) {
    deadbolt::bench::die(bench_name, "blocking connect: " + ec.message());
  }
  deadbolt::blocking_lock blocking_lock = blocking_client.lock(tag + "bench-uncontended-blocking");

  std::fprintf(stderr, "%s: %ld slices of %.0f ms each with a %ld ms lease, the same pairs through hiredis, with the "
               "watchdog, with metrics hooks and through the blocking API, every one between two raw slices (EVALSHA "
               "c1P1 through hiredis); %ld warm-up pairs first\n",
               bench_name, slices, slice_s * 1000, lease_ms, warm);
  // redis-benchmark once, for reference: the in-process raw slices should agree with it.
  // (Not on a cluster: redis-benchmark's key there would belong to any master.)
  const double redis_benchmark =
      cluster_ports.empty() ? deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests) : 0;
  pair_chain(bench_name, io, lock, std::chrono::milliseconds(lease_ms), warm, 0).run();
  pair_chain(bench_name, io, lock, 0ms, warm, 0).run();
  pair_chain(bench_name, io, hooked_lock, std::chrono::milliseconds(lease_ms), warm, 0).run();
  blocking_pairs(blocking_lock, std::chrono::milliseconds(lease_ms), warm, 0);

  const std::string raw_key = tag + "bench-raw-slices", raw_owner = "owner:1", raw_lease = std::to_string(lease_ms);
  auto raw = [&] { return probe.raw_slice_per_s(sha, raw_key, raw_lease, raw_owner, slice_s); };
  slice_ratios leased, protocol, watchdog, hooks, blocking;
  long hooked_events = 0, hooked_pairs = 0;
  std::uint64_t evalsha = 0, dels = 0;
  long leased_pairs = 0;
  deadbolt::bench::interleaved_slices slices_in_turn(raw);
  for (long i = 0; i < slices; ++i) {
    slices_in_turn.next(leased, [&] {
      const deadbolt::bench::command_counts before = probe.commandstats();
      // Each slice starts with a few unmeasured pairs: switching between the two modes arms or idles the
      // watchdog's timer once, which is not the steady state being measured.
      const pair_result a =
          pair_chain(bench_name, io, lock, std::chrono::milliseconds(lease_ms), slice_warm, slice_s).run();
      const deadbolt::bench::command_counts after = probe.commandstats();
      evalsha += deadbolt::bench::delta(before, after, "evalsha");
      dels += deadbolt::bench::delta(before, after, "del");
      leased_pairs += a.pairs + slice_warm;  // the commands counted include the unmeasured pairs
      return a;
    });
    slices_in_turn.next(protocol, [&] {
      const double rate = probe.raw_pair_slice_per_s(sha, unlock_sha, tag + "bench-uncontended-protocol", raw_lease,
                                                     "00000000-0000-0000-0000-000000000000:1", slice_s);
      return pair_result{rate, 0, 0, static_cast<long>(rate * slice_s)};
    });
    slices_in_turn.next(watchdog, [&] { return pair_chain(bench_name, io, lock, 0ms, slice_warm, slice_s).run(); });
    slices_in_turn.next(hooks, [&] {
      const long events_before = metrics->events;
      const pair_result c =
          pair_chain(bench_name, io, hooked_lock, std::chrono::milliseconds(lease_ms), slice_warm, slice_s).run();
      hooked_events += metrics->events - events_before;
      hooked_pairs += c.pairs + slice_warm;
      return c;
    });
    slices_in_turn.next(blocking, [&] {
      return blocking_pairs(blocking_lock, std::chrono::milliseconds(lease_ms), slice_warm, slice_s);
    });
  }
  probe.del(raw_key);
  // Top-level commands per leased pair: the EVALSHAs, plus DELs beyond the one the unlock script runs
  // itself when it releases (those are the client's unlock-latch DELs).
  const double commands_per_pair =
      (static_cast<double>(evalsha) + static_cast<double>(dels) - static_cast<double>(leased_pairs)) /
      static_cast<double>(leased_pairs);
  const std::size_t m = deadbolt::bench::median_index(leased.ratios);
  const std::size_t w = deadbolt::bench::median_index(watchdog.ratios);
  const std::size_t h = deadbolt::bench::median_index(hooks.ratios);
  const std::size_t b = deadbolt::bench::median_index(blocking.ratios);
  // The hook must have seen the pairs (an acquire and a release each), or the phase measured nothing.
  if (hooked_events < 2 * hooked_pairs) deadbolt::bench::die(bench_name, "the metrics hook missed events");
  const double raw_median = slices_in_turn.raw_median();
  // The client against the protocol's own pairs, slice by slice (they run one after the other).
  std::vector<double> to_protocol;
  for (std::size_t i = 0; i < leased.ratios.size(); ++i) to_protocol.push_back(leased.ratios[i] / protocol.ratios[i]);
  const std::size_t p = deadbolt::bench::median_index(protocol.ratios);
  std::printf("%s ratio=%.3f ratio_p25=%.3f ratio_p75=%.3f slices=%ld allocs_per_pair=%.3f pairs_per_s=%.0f "
              "raw_evalsha_per_s=%.0f redis_benchmark_evalsha_per_s=%.0f commands_per_pair=%.2f "
              "client_cpu_us_per_pair=%.2f watchdog_ratio=%.3f watchdog_ratio_p25=%.3f watchdog_ratio_p75=%.3f "
              "watchdog_allocs_per_pair=%.3f watchdog_pairs_per_s=%.0f hooks_ratio=%.3f hooks_ratio_p25=%.3f "
              "hooks_ratio_p75=%.3f hooks_allocs_per_pair=%.3f hooks_pairs_per_s=%.0f hook_events_per_pair=%.2f "
              "blocking_ratio=%.3f blocking_ratio_p25=%.3f blocking_ratio_p75=%.3f blocking_allocs_per_pair=%.3f "
              "blocking_pairs_per_s=%.0f protocol_ratio=%.3f ratio_to_protocol=%.3f\n",
              bench_name, leased.ratios[m], leased.quantile(0.25), leased.quantile(0.75), slices,
              leased.allocs_per_pair, leased.runs[m].pairs_per_s, raw_median, redis_benchmark, commands_per_pair,
              leased.runs[m].cpu_us / static_cast<double>(std::max(leased.runs[m].pairs, 1L)),
              watchdog.ratios[w], watchdog.quantile(0.25), watchdog.quantile(0.75), watchdog.allocs_per_pair,
              watchdog.runs[w].pairs_per_s, hooks.ratios[h], hooks.quantile(0.25), hooks.quantile(0.75),
              hooks.allocs_per_pair, hooks.runs[h].pairs_per_s,
              static_cast<double>(hooked_events) / static_cast<double>(std::max(hooked_pairs, 1L)),
              blocking.ratios[b], blocking.quantile(0.25), blocking.quantile(0.75), blocking.allocs_per_pair,
              blocking.runs[b].pairs_per_s, protocol.ratios[p], to_protocol[deadbolt::bench::median_index(to_protocol)]);
  return 0;
}
