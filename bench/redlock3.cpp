// redlock3: one owner on the async API chains red lock try_lock -> unlock -> try_lock ... over three
// independent servers (three clients on this thread's io_context), the callbacks running on the io
// thread. A pair costs four round trips in a row: the three members are acquired one after another
// (Redisson's order), then released in parallel. The raw limit is redis-benchmark -c 1 -P 1 EVALSHA of
// the acquire script on the first server; ratio = pairs/s ÷ (raw / 4). Prints one summary line last:
//   redlock3 ratio=… pairs_per_s=… raw_evalsha_per_s=… mean_validity_ms=… allocs_per_pair=…
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "deadbolt/multi_lock.hpp"
#include "server_probe.hpp"

namespace {

using namespace std::chrono_literals;
using deadbolt::bench::clock_type;
constexpr const char* bench_name = "redlock3";
constexpr deadbolt::owner_id owner = 1;
constexpr double round_trips_per_pair = 4;

struct run_result {
  double pairs_per_s = 0;
  std::size_t allocations = 0;
  double validity_sum_ms = 0;
};

class pair_chain {
 public:
  pair_chain(asio::io_context& io, deadbolt::red_lock& lock, std::chrono::milliseconds lease, long warm, long measured)
      : io_(io), lock_(lock), lease_(lease), warm_(warm), total_(warm + measured) {}

  run_result run() {
    asio::post(io_, [this] { next(); });
    io_.restart();
    io_.run();
    if (!error_.empty()) deadbolt::bench::die(bench_name, error_);
    return {static_cast<double>(total_ - warm_) / seconds_, allocations_, validity_sum_ms_};
  }

 private:
  void next() {
    if (done_ == warm_) {
      deadbolt::bench::start_counting_allocations();
      start_ = clock_type::now();
    }
    lock_.async_try_lock(owner, 0ms, lease_, [this](std::error_code ec, std::chrono::milliseconds validity) {
      if (ec || validity <= 0ms) return fail(ec ? "lock: " + ec.message() : "lock: not acquired (uncontended?)");
      if (done_ >= warm_) validity_sum_ms_ += static_cast<double>(validity.count());
      lock_.async_unlock(owner, [this](std::error_code ec, const std::vector<std::error_code>&) {
        if (ec) return fail("unlock: " + ec.message());
        if (++done_ < total_) return next();
        allocations_ = deadbolt::bench::stop_counting_allocations();
        seconds_ = deadbolt::bench::seconds_since(start_);
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
  deadbolt::red_lock& lock_;
  std::chrono::milliseconds lease_;
  long warm_, total_, done_ = 0;
  clock_type::time_point start_;
  double seconds_ = 0;
  double validity_sum_ms_ = 0;
  std::size_t allocations_ = 0;
  std::string error_;
};

std::vector<int> parse_ports(const std::string& list) {
  std::vector<int> out;
  std::stringstream in(list);
  std::string port;
  while (std::getline(in, port, ',')) {
    if (!port.empty()) out.push_back(std::stoi(port));
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  const deadbolt::bench::options opt(argc, argv, bench_name);
  const std::vector<int> ports = parse_ports(opt.get("ports", std::string()));
  if (ports.size() != 3) deadbolt::bench::die(bench_name, "--ports needs three ports, comma-separated");
  const long rounds = opt.get("rounds", 5L);
  const long warm = opt.get("warmup", 500L);
  const long pairs = opt.get("pairs", 5000L);
  const long raw_requests = opt.get("raw-requests", 50000L);
  const long lease_ms = opt.get("lease-ms", 30000L);

  deadbolt::bench::server_probe probe(bench_name, ports[0]);
  const std::string sha = probe.load_acquire_script();

  asio::io_context io(1);
  std::vector<std::unique_ptr<deadbolt::client>> clients;
  std::vector<deadbolt::reentrant_lock> members;
  for (int port : ports) {
    deadbolt::config cfg;
    cfg.url = "redis://127.0.0.1:" + std::to_string(port);
    clients.push_back(std::make_unique<deadbolt::client>(io.get_executor(), cfg));
    std::error_code connect_error = make_error_code(deadbolt::errc::not_connected);
    clients.back()->async_connect([&](std::error_code ec) {
      connect_error = ec;
      io.stop();
    });
    io.restart();
    io.run();
    if (connect_error) deadbolt::bench::die(bench_name, "connect: " + connect_error.message());
    members.push_back(clients.back()->lock("bench-redlock3"));
  }
  deadbolt::red_lock lock(std::move(members));

  std::fprintf(stderr, "%s: %ld rounds of %ld + %ld pairs (3 servers, lease %ld ms); raw c1P1 (%ld requests) on "
               "the first server before and after each round\n", bench_name, rounds, warm, pairs, lease_ms,
               raw_requests);
  std::vector<double> raws, ratios;
  std::vector<run_result> results;
  std::size_t allocs = 0;
  double raw_before = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
  for (long r = 0; r < rounds; ++r) {
    const run_result a = pair_chain(io, lock, std::chrono::milliseconds(lease_ms), warm, pairs).run();
    const double raw_after = deadbolt::bench::raw_evalsha_per_s(probe, sha, 1, 1, raw_requests);
    const double raw_r = (raw_before + raw_after) / 2;
    raw_before = raw_after;
    raws.push_back(raw_r);
    results.push_back(a);
    ratios.push_back(a.pairs_per_s / (raw_r / round_trips_per_pair));
    allocs = std::max(allocs, a.allocations);
    std::fprintf(stderr, "%s: round %ld: raw %.0f EVALSHA/s; %.0f pairs/s, ratio %.3f, %zu allocs\n", bench_name,
                 r + 1, raw_r, a.pairs_per_s, ratios.back(), a.allocations);
  }
  const std::size_t m = deadbolt::bench::median_index(ratios);
  std::printf("%s ratio=%.3f pairs_per_s=%.0f raw_evalsha_per_s=%.0f mean_validity_ms=%.0f allocs_per_pair=%.1f\n",
              bench_name, ratios[m], results[m].pairs_per_s, raws[m],
              results[m].validity_sum_ms / static_cast<double>(pairs),
              static_cast<double>(allocs) / static_cast<double>(pairs));
  for (auto& c : clients) c->shutdown();
  io.restart();
  io.run();
  return 0;
}
