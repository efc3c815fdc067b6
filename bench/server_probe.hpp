// Helpers for the lock benchmarks that run against a server started by bench/run (lib.sh start_redis):
// command-line options, a hiredis connection for side-channel queries (INFO commandstats, PTTL, ...)
// and the raw limit measured with redis-benchmark running EVALSHA of the library's lock_acquire script.
#pragma once

#include <hiredis/hiredis.h>

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "scripts.hpp"  // the library's embedded scripts (src/generated)

namespace deadbolt::bench {

[[noreturn]] void die(const char* bench, const std::string& what);

/// `--name value` options; every benchmark takes --port (the server's, from bench/run).
class options {
 public:
  options(int argc, char** argv, const char* bench);
  long get(const std::string& name, long fallback) const;
  std::string get(const std::string& name, const std::string& fallback) const;

 private:
  const char* bench_;
  std::map<std::string, std::string> values_;
};

/// Which of `values` is the median (the lower middle one for an even count). The lock benchmarks run
/// rounds of (raw limit, client) back to back and report the round with the median ratio: the machine's
/// speed drifts, and a ratio of two neighbouring measurements drifts much less than either.
std::size_t median_index(const std::vector<double>& values);

/// CPU time (user + system) this process has used so far, in microseconds.
double process_cpu_us();

using clock_type = std::chrono::steady_clock;
inline double seconds_since(clock_type::time_point start) {
  return std::chrono::duration<double>(clock_type::now() - start).count();
}

/// Per-command figures from INFO commandstats ("evalsha", "hexists", "publish", ...): calls, and the
/// server's time spent in them. Commands a script runs through redis.call/pcall are counted under their
/// own names too (and their time is also part of the script's).
struct command_stat {
  std::uint64_t calls = 0;
  std::uint64_t usec = 0;
};
using command_counts = std::map<std::string, command_stat>;
inline command_stat delta_stat(const command_counts& before, const command_counts& after, const std::string& cmd) {
  const auto a = after.find(cmd);
  const auto b = before.find(cmd);
  const command_stat x = a == after.end() ? command_stat{} : a->second;
  const command_stat y = b == before.end() ? command_stat{} : b->second;
  return {x.calls - y.calls, x.usec - y.usec};
}
inline std::uint64_t delta(const command_counts& before, const command_counts& after, const std::string& cmd) {
  return delta_stat(before, after, cmd).calls;
}

/// The per-command figures in the text of INFO commandstats.
command_counts parse_commandstats(const std::string& info);

/// A plain hiredis connection to the benchmark's server, for measuring from the side.
class server_probe {
 public:
  server_probe(const char* bench, int port);
  ~server_probe();
  server_probe(const server_probe&) = delete;
  server_probe& operator=(const server_probe&) = delete;

  int port() const { return port_; }
  command_counts commandstats();
  /// PTTL key in ms (-2: no key, -1: no TTL).
  long long pttl(const std::string& key);
  void del(const std::string& key);
  /// Cluster: whether this node serves `key`'s slot (it answers EXISTS instead of MOVED).
  bool owns(const std::string& key);
  /// SCRIPT LOAD of one of the library's embedded scripts (the body it sends, includes inlined);
  /// returns its SHA1, the one the library's EVALSHAs name.
  std::string load_script(const deadbolt::detail::script& s);
  std::string load_acquire_script() { return load_script(deadbolt::detail::scripts::lock_acquire); }
  /// The raw limit over one short slice: EVALSHA `sha` with `args` (one key, then its arguments),
  /// one request at a time on this connection (c1P1, like redis-benchmark -c 1 -P 1), for `seconds`;
  /// requests per second.
  double raw_slice_per_s(const std::string& sha, const std::string& key, const std::string& arg1,
                         const std::string& arg2, double seconds);
  /// The lock+unlock pairs of lock_uncontended as deadbolt sends them, through this connection for
  /// `seconds`: EVALSHA `acquire_sha` (with the previous pair's latch DEL written before it in the
  /// same batch), then EVALSHA `unlock_sha` with a new latch key and the unlock message, each waited
  /// for. The Redisson protocol's own ceiling through the thinnest client; pairs per second.
  double raw_pair_slice_per_s(const std::string& acquire_sha, const std::string& unlock_sha, const std::string& key,
                              const std::string& lease, const std::string& owner, double seconds);

 private:
  redisReply* run(const char* format, ...);
  void take_reply();
  const char* bench_;
  int port_;
  redisContext* ctx_ = nullptr;
  unsigned long latch_serial_ = 0;
};

/// Cluster benchmarks: the "redis+cluster://" URL of the masters "P1,P2,..." and which of them serves
/// `key` (its port; dies if none does).
std::string cluster_url(const std::string& ports);
int cluster_node_serving(const char* bench, const std::string& ports, const std::string& key);

/// Runs a redis-benchmark command line that ends in `--csv EVALSHA ...`; returns its requests per second.
double redis_benchmark_evalsha(const std::string& command);

/// Runs redis-benchmark (redis-tools) on the server: `-c clients -P pipeline -n requests` EVALSHA of
/// the acquire script on one key (1 key, lease 30000, owner "owner:1"; the same owner re-enters, so
/// every call succeeds), and returns its requests per second. The key is deleted afterwards. If
/// `server_us_per_call` is given, it receives the server's time per EVALSHA (INFO commandstats).
double raw_evalsha_per_s(server_probe& probe, const std::string& sha, int clients, int pipeline, long requests,
                         double* server_us_per_call = nullptr);

/// redis-benchmark --cluster on the cluster that `seed_port` belongs to: `-c clients -P pipeline -n
/// requests -r keyspace` EVALSHA of the acquire script on keys "bench-raw:{tag}:<n>" (the "{tag}" sends
/// each to its slot's master), lease 30000, owner "owner:1"; returns its requests per second.
double raw_cluster_evalsha_per_s(int seed_port, const std::string& sha, int clients, int pipeline, long requests,
                                 long keyspace);

/// The same for any script and arguments ("<numkeys> <keys...> <args...>"); deletes nothing.
double raw_evalsha_args_per_s(server_probe& probe, const std::string& sha, const std::string& args, int clients,
                              int pipeline, long requests, double* server_us_per_call = nullptr);

}  // namespace deadbolt::bench
