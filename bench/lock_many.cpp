// lock_many (P3): one async client, 1000 distinct locks. Each round starts all 1000 acquisitions at
// once (a fixed lease); each lock is unlocked as soon as it is acquired; the round ends when every
// unlock has completed, and the next begins. Compares pairs per second with the raw limit of one
// pipelined connection: redis-benchmark -c 1 -P 16 EVALSHA of the acquire script, rate / 2. Prints one
// summary line last:
//   lock_many ratio=… pairs_per_s=… raw_evalsha_p16_per_s=… allocs_per_pair=… locks=… server_us_per_pair=…
//             raw_server_us_per_evalsha=… server_bound_ratio=… client_cpu_us_per_pair=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "lock_rounds.hpp"
#include "server_probe.hpp"

namespace {

using namespace std::chrono_literals;
constexpr const char* bench_name = "lock_many";

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long rounds = opt.get("rounds", 5L);
  const long lock_count = opt.get("locks", 1000L);
  const long warm = opt.get("warmup-rounds", 5L);
  const long measured = opt.get("measured-rounds", 40L);
  const long raw_requests = opt.get("raw-requests", 150000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  // Every acquisition is recorded in the held-lock table, leased or not.
  cfg.max_held_locks = std::max<std::size_t>(cfg.max_held_locks, static_cast<std::size_t>(lock_count));
  deadbolt::client client(io.get_executor(), cfg);
  std::error_code connect_error = make_error_code(deadbolt::errc::not_connected);
  client.async_connect([&](std::error_code ec) {
    connect_error = ec;
    io.stop();
  });
  io.run();
  if (connect_error) deadbolt::bench::die(bench_name, "connect: " + connect_error.message());
  std::vector<deadbolt::reentrant_lock> locks;
  locks.reserve(static_cast<std::size_t>(lock_count));
  for (long i = 0; i < lock_count; ++i) locks.push_back(client.lock("bench-many-" + std::to_string(i)));

  std::fprintf(stderr, "%s: %ld rounds of: %ld + %ld rounds of %ld locks with a %ld ms lease; raw c1P16 (%ld "
               "requests) before and after each round\n", bench_name, rounds, warm, measured, lock_count, lease_ms,
               raw_requests);
  // The server's own time (INFO commandstats usec) per raw EVALSHA and per pair, summed over rounds.
  double raw_us = 0;
  std::uint64_t pair_us = 0;
  // Every round is bracketed by raw measurements (the one after a round is the one before the next);
  // the round's limit is their mean / 2.
  double raw_us_r = 0;
  double raw_before = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 16, raw_requests, &raw_us_r);
  raw_us += raw_us_r;
  std::vector<double> raws, ratios;
  std::vector<deadbolt::bench::run_result> results;
  std::size_t allocations = 0;
  for (long r = 0; r < rounds; ++r) {
    const deadbolt::bench::command_counts before = probe.commandstats();
    const deadbolt::bench::run_result a = deadbolt::bench::rounds_runner(bench_name, io, locks, std::chrono::milliseconds(lease_ms), warm, measured).run();
    const deadbolt::bench::command_counts after = probe.commandstats();
    const double raw_after = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 16, raw_requests, &raw_us_r);
    raw_us += raw_us_r;
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    // Top-level commands: the scripts, and the latch DELs (DEL calls beyond the one each releasing
    // unlock script runs itself; their time is taken as the average DEL's).
    const auto del = deadbolt::bench::delta_stat(before, after, "del");
    const auto pairs_r = static_cast<std::uint64_t>((warm + measured) * lock_count);
    const std::uint64_t latch_dels = del.calls - pairs_r;
    pair_us += deadbolt::bench::delta_stat(before, after, "evalsha").usec +
               deadbolt::bench::delta_stat(before, after, "eval").usec +
               (del.calls == 0 ? 0 : del.usec * latch_dels / del.calls);
    raws.push_back(raw_r);
    results.push_back(a);
    ratios.push_back(a.pairs_per_s / (raw_r / 2));
    allocations = std::max(allocations, a.allocations);
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s (P16), %.0f pairs/s, ratio %.3f, %zu allocs\n",
                 bench_name, r + 1, raw_r, a.pairs_per_s, ratios.back(), a.allocations);
  }
  const std::size_t m = deadbolt::bench::median_index(ratios);
  const double pairs = static_cast<double>(measured) * static_cast<double>(lock_count);
  const double server_us_per_pair =
      static_cast<double>(pair_us) / static_cast<double>(rounds * (warm + measured) * lock_count);
  const double raw_server_us = raw_us / static_cast<double>(rounds + 1);
  // If the server's time per command were all that limits both, the ratio would be this.
  const double server_bound_ratio = 2 * raw_server_us / server_us_per_pair;
  std::printf("%s ratio=%.3f pairs_per_s=%.0f raw_evalsha_p16_per_s=%.0f allocs_per_pair=%.3f locks=%ld "
              "server_us_per_pair=%.2f raw_server_us_per_evalsha=%.2f server_bound_ratio=%.3f client_cpu_us_per_pair=%.2f\n",
              bench_name, ratios[m], results[m].pairs_per_s, raws[m], static_cast<double>(allocations) / pairs,
              lock_count, server_us_per_pair, raw_server_us, server_bound_ratio, results[m].cpu_us / pairs);
  return 0;
}
