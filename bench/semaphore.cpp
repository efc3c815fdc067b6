// semaphore: `--ops` concurrent async chains (default 8) on one client and one semaphore with that
// many permits, each chaining async_try_acquire(1) -> async_release(1) -> ...; every attempt succeeds,
// and the client pipelines the chains' scripts on its one connection. Compares acquire+release pairs
// per second with the raw limit of the same pipelining: redis-benchmark -c 1 -P <ops> EVALSHA of
// lua/semaphore_try_acquire.lua, whose rate / 2 is what pairs of two scripts can reach. Rounds as the
// lock benchmarks (bench/README.md): each bracketed by raw runs, the median ratio reported. Prints one
// summary line last:
//   semaphore ratio=… pairs_per_s=… raw_evalsha_per_s=… ops=… allocs_per_pair=… publishes_per_pair=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <string>
#include <system_error>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "server_probe.hpp"

namespace {

using deadbolt::bench::clock_type;
constexpr const char* bench_name = "semaphore";
const std::string sem_name = "bench-semaphore";
const std::string raw_sem = "bench-raw-semaphore";

struct run_result {
  double pairs_per_s = 0;
  std::size_t allocations = 0;
  long pairs = 0;
};

// `ops` chains; measurement starts once `warm` pairs are done in total and ends at `warm + measured`.
class chains {
 public:
  chains(asio::io_context& io, deadbolt::semaphore s, int ops, long warm, long measured)
      : io_(io), sem_(std::move(s)), ops_(ops), warm_(warm), total_(warm + measured) {}

  run_result run() {
    asio::post(io_, [this] {
      for (int i = 0; i < ops_; ++i) next();
    });
    io_.restart();
    io_.run();
    if (!error_.empty()) deadbolt::bench::die(bench_name, error_);
    return {static_cast<double>(total_ - warm_) / seconds_, allocations_, total_ - warm_};
  }

 private:
  void next() {
    if (started_ >= total_) return;
    ++started_;
    sem_.async_try_acquire(1, [this](std::error_code ec, bool acquired) {
      if (ec || !acquired) return fail(ec ? "try_acquire: " + ec.message() : "try_acquire: no permit");
      sem_.async_release(1, [this](std::error_code ec) {
        if (ec) return fail("release: " + ec.message());
        ++done_;
        if (done_ == warm_) {
          deadbolt::bench::start_counting_allocations();
          start_ = clock_type::now();
        }
        if (done_ == total_) {
          allocations_ = deadbolt::bench::stop_counting_allocations();
          seconds_ = deadbolt::bench::seconds_since(start_);
          io_.stop();
          return;
        }
        next();
      });
    });
  }
  void fail(const std::string& what) {
    deadbolt::bench::stop_counting_allocations();
    error_ = what;
    io_.stop();
  }

  asio::io_context& io_;
  deadbolt::semaphore sem_;
  int ops_;
  long warm_, total_, started_ = 0, done_ = 0;
  clock_type::time_point start_;
  double seconds_ = 0;
  std::size_t allocations_ = 0;
  std::string error_;
};

template <typename T, typename Start>
T run_one(asio::io_context& io, Start start) {
  std::error_code error = make_error_code(deadbolt::errc::not_connected);
  T value{};
  start([&](std::error_code ec, auto v) {
    error = ec;
    value = v;
    io.stop();
  });
  io.restart();
  io.run();
  if (error) deadbolt::bench::die(bench_name, "setup: " + error.message());
  return value;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const int port = static_cast<int>(opt.get("port", 0L));
  const long rounds = opt.get("rounds", 5L);
  const int ops = static_cast<int>(opt.get("ops", 8L));
  const long warm = opt.get("warmup", 4000L);
  const long pairs = opt.get("pairs", 40000L);
  const long raw_requests = opt.get("raw-requests", 100000L);

  deadbolt::bench::server_probe probe(bench_name, port);
  const std::string sha = probe.load_script(deadbolt::detail::scripts::semaphore_try_acquire);

  asio::io_context io(1);
  deadbolt::config cfg;
  cfg.url = "redis://127.0.0.1:" + std::to_string(port);
  deadbolt::client client(io.get_executor(), cfg);
  const deadbolt::semaphore sem = client.semaphore(sem_name);
  probe.del(sem_name);
  run_one<bool>(io, [&](auto cb) { client.semaphore(sem_name).async_try_set_permits(ops, cb); });
  // The raw key: enough permits that every raw try_acquire succeeds.
  run_one<deadbolt::reply>(io, [&](auto cb) { client.async_command({"SET", raw_sem, "1000000000000"}, cb); });
  const std::string raw_args = "1 " + raw_sem + " 1";

  std::fprintf(stderr, "%s: %ld rounds of: %d concurrent try_acquire(1)+release(1) chains on one client, %ld + "
               "%ld pairs; raw c1P%d EVALSHA semaphore_try_acquire (%ld requests) before and after each round\n",
               bench_name, rounds, ops, warm, pairs, ops, raw_requests);
  double raw_before = deadbolt::bench::raw_evalsha_args_per_s(probe, sha, raw_args, 1, ops, raw_requests);
  std::vector<double> raws, ratios;
  std::vector<run_result> results;
  std::size_t allocs = 0;
  std::uint64_t publishes = 0;
  long measured_pairs = 0;
  for (long r = 0; r < rounds; ++r) {
    const deadbolt::bench::command_counts before = probe.commandstats();
    const run_result a = chains(io, sem, ops, warm, pairs).run();
    publishes += deadbolt::bench::delta(before, probe.commandstats(), "publish");
    measured_pairs += a.pairs + warm;
    const double raw_after = deadbolt::bench::raw_evalsha_args_per_s(probe, sha, raw_args, 1, ops, raw_requests);
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    results.push_back(a);
    ratios.push_back(a.pairs_per_s / (raw_r / 2));
    allocs = std::max(allocs, a.allocations);
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s; %.0f pairs/s, ratio %.3f, %zu allocs\n", bench_name,
                 r + 1, raw_r, a.pairs_per_s, ratios.back(), a.allocations);
  }
  probe.del(raw_sem);
  probe.del(sem_name);
  const std::size_t m = deadbolt::bench::median_index(ratios);
  std::printf("%s ratio=%.3f pairs_per_s=%.0f raw_evalsha_per_s=%.0f ops=%d allocs_per_pair=%.3f "
              "publishes_per_pair=%.2f\n",
              bench_name, ratios[m], results[m].pairs_per_s, raws[m], ops,
              static_cast<double>(allocs) / static_cast<double>(pairs),
              static_cast<double>(publishes) / static_cast<double>(measured_pairs));
  return 0;
}
