// lock_uncontended (P1): one owner on the async API chains lock -> unlock -> lock ... on one lock, the
// callbacks running on the io thread (this thread). Compares lock+unlock pairs per second with the raw
// limit of one unpipelined connection: redis-benchmark -c 1 -P 1 EVALSHA of the acquire script, whose
// rate / 2 is what a pair of round trips can reach. Prints one summary line last:
//   lock_uncontended ratio=… allocs_per_pair=… pairs_per_s=… raw_evalsha_per_s=… commands_per_pair=…
//                    client_cpu_us_per_pair=… watchdog_ratio=… watchdog_allocs_per_pair=… watchdog_pairs_per_s=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "server_probe.hpp"

namespace {

using namespace std::chrono_literals;
using deadbolt::bench::clock_type;
constexpr const char* bench_name = "lock_uncontended";
constexpr deadbolt::owner_id owner = 1;

struct run_result {
  double pairs_per_s = 0;
  std::size_t allocations = 0;
  double cpu_us = 0;  // the client process's CPU time over the measured part
  long pairs = 0;  // warm-up included
};

// lock -> unlock -> lock ... for warm + measured pairs; allocations and time are taken over the
// measured pairs only, from inside the chain (so the first call, made from outside the io thread,
// is not counted).
class pair_chain {
 public:
  pair_chain(asio::io_context& io, deadbolt::reentrant_lock lock, std::chrono::milliseconds lease, long warm,
             long measured)
      : io_(io), lock_(std::move(lock)), lease_(lease), warm_(warm), total_(warm + measured) {}

  run_result run() {
    asio::post(io_, [this] { next(); });
    io_.restart();
    io_.run();
    if (!error_.empty()) deadbolt::bench::die(bench_name, error_);
    return {static_cast<double>(total_ - warm_) / seconds_, allocations_, cpu_us_, total_};
  }

 private:
  void next() {
    if (done_ == warm_) {
      deadbolt::bench::start_counting_allocations();
      start_ = clock_type::now();
      cpu_start_ = deadbolt::bench::process_cpu_us();
    }
    lock_.async_try_lock(owner, 0ms, lease_, [this](std::error_code ec, bool acquired) {
      if (ec || !acquired) return fail(ec ? "lock: " + ec.message() : "lock: not acquired (uncontended?)");
      lock_.async_unlock(owner, [this](std::error_code ec) {
        if (ec) return fail("unlock: " + ec.message());
        if (++done_ < total_) return next();
        allocations_ = deadbolt::bench::stop_counting_allocations();
        seconds_ = deadbolt::bench::seconds_since(start_);
        cpu_us_ = deadbolt::bench::process_cpu_us() - cpu_start_;
        io_.stop();
      });
    });
  }
  void fail(const std::string& what) {
    deadbolt::bench::stop_counting_allocations();
    error_ = what;
    io_.stop();
  }

  asio::io_context& io_;
  deadbolt::reentrant_lock lock_;
  std::chrono::milliseconds lease_;
  long warm_, total_, done_ = 0;
  clock_type::time_point start_;
  double seconds_ = 0;
  double cpu_start_ = 0, cpu_us_ = 0;
  std::size_t allocations_ = 0;
  std::string error_;
};

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long rounds = opt.get("rounds", 5L);
  const long warm = opt.get("warmup", 2000L);
  const long pairs = opt.get("pairs", 20000L);
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_acquire_script();

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  deadbolt::client client(io.get_executor(), cfg);
  std::error_code connect_error = make_error_code(deadbolt::errc::not_connected);
  client.async_connect([&](std::error_code ec) {
    connect_error = ec;
    io.stop();
  });
  io.run();
  if (connect_error) deadbolt::bench::die(bench_name, "connect: " + connect_error.message());
  const deadbolt::reentrant_lock lock = client.lock("bench-uncontended");

  std::fprintf(stderr, "%s: %ld rounds of: %ld + %ld pairs with a %ld ms lease, the same with the watchdog; raw "
               "c1P1 (%ld requests) before and after each round\n", bench_name, rounds, warm, pairs, lease_ms,
               raw_requests);
  std::vector<double> raws, leased_ratios, watchdog_ratios;
  std::vector<run_result> leased, watchdog;
  std::size_t leased_allocs = 0, watchdog_allocs = 0;
  long leased_pairs = 0;
  std::uint64_t evalsha = 0, dels = 0;
  // Every round is bracketed by raw measurements (the one after a round is the one before the next);
  // the round's limit is their mean / 2.
  double raw_before = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  for (long r = 0; r < rounds; ++r) {
    const deadbolt::bench::command_counts before = probe.commandstats();
    const run_result a = pair_chain(io, lock, std::chrono::milliseconds(lease_ms), warm, pairs).run();
    const deadbolt::bench::command_counts after = probe.commandstats();
    evalsha += deadbolt::bench::delta(before, after, "evalsha");
    dels += deadbolt::bench::delta(before, after, "del");
    leased_pairs += a.pairs;
    const run_result b = pair_chain(io, lock, 0ms, warm, pairs).run();
    const double raw_after = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    leased.push_back(a);
    watchdog.push_back(b);
    leased_ratios.push_back(a.pairs_per_s / (raw_r / 2));
    watchdog_ratios.push_back(b.pairs_per_s / (raw_r / 2));
    leased_allocs = std::max(leased_allocs, a.allocations);
    watchdog_allocs = std::max(watchdog_allocs, b.allocations);
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s; lease %.0f pairs/s, ratio %.3f, %zu allocs; watchdog "
                 "%.0f pairs/s, ratio %.3f, %zu allocs\n", bench_name, r + 1, raw_r, a.pairs_per_s,
                 leased_ratios.back(), a.allocations, b.pairs_per_s, watchdog_ratios.back(), b.allocations);
  }
  // Top-level commands per leased pair: the EVALSHAs, plus DELs beyond the one the unlock script runs
  // itself when it releases (those are the client's unlock-latch DELs).
  const double commands_per_pair =
      (static_cast<double>(evalsha) + static_cast<double>(dels) - static_cast<double>(leased_pairs)) /
      static_cast<double>(leased_pairs);
  const std::size_t m = deadbolt::bench::median_index(leased_ratios);
  const std::size_t w = deadbolt::bench::median_index(watchdog_ratios);
  std::printf("%s ratio=%.3f allocs_per_pair=%.3f pairs_per_s=%.0f raw_evalsha_per_s=%.0f commands_per_pair=%.2f "
              "client_cpu_us_per_pair=%.2f watchdog_ratio=%.3f watchdog_allocs_per_pair=%.3f watchdog_pairs_per_s=%.0f\n",
              bench_name, leased_ratios[m], static_cast<double>(leased_allocs) / static_cast<double>(pairs),
              leased[m].pairs_per_s, raws[m], commands_per_pair, leased[m].cpu_us / static_cast<double>(pairs),
              watchdog_ratios[w], static_cast<double>(watchdog_allocs) / static_cast<double>(pairs),
              watchdog[w].pairs_per_s);
  return 0;
}
