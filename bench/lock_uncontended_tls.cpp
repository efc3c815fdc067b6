// lock_uncontended_tls: lock_uncontended's fixed-lease pairs over TLS. One owner on the async API
// chains lock -> unlock -> lock ... on one lock of a client on rediss://127.0.0.1:P, verifying the
// server's certificate against the run's CA. The raw limit is redis-benchmark --tls -c 1 -P 1 EVALSHA
// of the acquire script, whose rate / 2 is what a pair of round trips can reach. As in lock_uncontended,
// raw and client run in short interleaved slices, each client slice compared with the mean of the raw
// slices on either side; the summary gives the median of those ratios and their spread:
//   lock_uncontended_tls ratio=… ratio_p25=… ratio_p75=… slices=… allocs_per_pair=… pairs_per_s=…
//                        limit_pairs_per_s=… raw_evalsha_per_s=… redis_benchmark_evalsha_per_s=…
//                        commands_per_pair=… client_cpu_us_per_pair=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>

#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "pair_chain.hpp"
#include "server_probe.hpp"
#include "tls_cli.hpp"

namespace {

constexpr const char* bench_name = "lock_uncontended_tls";
using deadbolt::bench::pair_chain;
using deadbolt::bench::pair_result;

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("tls-port", 0L));
  const std::string ca_file = opt.get("ca-file", std::string());
  const long slices = opt.get("slices", 24L);
  const double slice_s = static_cast<double>(opt.get("slice-ms", 400L)) / 1000;
  const long warm = opt.get("warmup", 2000L);
  const long slice_warm = opt.get("slice-warmup", 20L);
  const long raw_requests = opt.get("raw-requests", 20000L);
  const std::chrono::milliseconds lease(opt.get("lease-ms", 30000L));

  deadbolt::bench::tls_cli cli(bench_name, port, ca_file);
  const std::string sha = cli.load_script(deadbolt::detail::scripts::lock_acquire);

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "rediss://127.0.0.1:" + std::to_string(port);
  cfg.tls.ca_file = ca_file;  // verify_peer stays on: the certificate names IP:127.0.0.1
  deadbolt::client client(io.get_executor(), cfg);
  deadbolt::bench::connect_or_die(bench_name, io, client);
  const deadbolt::reentrant_lock lock = client.lock("bench-uncontended-tls");

  std::fprintf(stderr, "%s: %ld slices of %.0f ms each with a %lld ms lease, every one between two raw slices "
               "(redis-benchmark --tls -c 1 -P 1 EVALSHA); %ld warm-up pairs first\n",
               bench_name, slices, slice_s * 1000, static_cast<long long>(lease.count()), warm);
  const std::string raw_key = "bench-raw-evalsha";
  const std::string raw_args = "1 " + raw_key + " " + std::to_string(lease.count()) + " owner:1";
  // Once with many requests, for reference; it also gives the rate the slices' request counts aim at.
  const double redis_benchmark = cli.raw_evalsha_per_s(sha, raw_args, raw_requests);
  pair_chain(bench_name, io, lock, lease, warm, 0).run();

  double raw_rate = redis_benchmark;
  auto raw = [&] {
    const long requests = std::max(1000L, static_cast<long>(raw_rate * slice_s));
    raw_rate = cli.raw_evalsha_per_s(sha, raw_args, requests);
    return raw_rate;
  };
  deadbolt::bench::slice_ratios leased;
  std::uint64_t evalsha = 0, dels = 0;
  long leased_pairs = 0;
  deadbolt::bench::interleaved_slices slices_in_turn(raw);
  for (long i = 0; i < slices; ++i) {
    slices_in_turn.next(leased, [&] {
      const deadbolt::bench::command_counts before = cli.commandstats();
      const pair_result r = pair_chain(bench_name, io, lock, lease, slice_warm, slice_s).run();
      const deadbolt::bench::command_counts after = cli.commandstats();
      evalsha += deadbolt::bench::delta(before, after, "evalsha");
      dels += deadbolt::bench::delta(before, after, "del");
      leased_pairs += r.pairs + slice_warm;  // the commands counted include the unmeasured pairs
      return r;
    });
  }
  cli.del(raw_key);
  // As in lock_uncontended: the EVALSHAs, plus the DELs beyond the one each releasing unlock runs.
  const double commands_per_pair =
      (static_cast<double>(evalsha) + static_cast<double>(dels) - static_cast<double>(leased_pairs)) /
      static_cast<double>(leased_pairs);
  const std::size_t m = leased.median();
  std::printf("%s ratio=%.3f ratio_p25=%.3f ratio_p75=%.3f slices=%ld allocs_per_pair=%.3f pairs_per_s=%.0f "
              "limit_pairs_per_s=%.0f raw_evalsha_per_s=%.0f redis_benchmark_evalsha_per_s=%.0f "
              "commands_per_pair=%.2f client_cpu_us_per_pair=%.2f\n",
              bench_name, leased.ratios[m], leased.quantile(0.25), leased.quantile(0.75), slices,
              leased.allocs_per_pair, leased.runs[m].pairs_per_s, leased.limits[m],
              slices_in_turn.raw_median(), redis_benchmark, commands_per_pair,
              leased.cpu_us_per_pair(m));
  return 0;
}
