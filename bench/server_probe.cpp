#include "server_probe.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "deadbolt/detail/lock_names.hpp"

namespace deadbolt::bench {

namespace {
constexpr const char* raw_key = "bench-raw-evalsha";
}

void die(const char* bench, const std::string& what) {
  std::fprintf(stderr, "%s: %s\n", bench, what.c_str());
  std::exit(1);
}

std::size_t median_index(const std::vector<double>& values) {
  std::vector<std::size_t> order(values.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return values[a] < values[b]; });
  return order.empty() ? 0 : order[(order.size() - 1) / 2];
}

double process_cpu_us() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) * 1e6 +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

options::options(int argc, char** argv, const char* bench) : bench_(bench) {
  for (int i = 1; i < argc; i += 2) {
    const std::string name = argv[i];
    if (name.size() < 3 || name.compare(0, 2, "--") != 0 || i + 1 >= argc) {
      die(bench, "usage: " + std::string(bench) + " --port N [--option value ...]");
    }
    values_[name.substr(2)] = argv[i + 1];
  }
}

long options::get(const std::string& name, long fallback) const {
  const auto it = values_.find(name);
  if (it == values_.end()) return fallback;
  char* end = nullptr;
  const long v = std::strtol(it->second.c_str(), &end, 10);
  if (end == it->second.c_str() || *end != '\0') die(bench_, "--" + name + " wants a number");
  return v;
}

std::string options::get(const std::string& name, const std::string& fallback) const {
  const auto it = values_.find(name);
  return it == values_.end() ? fallback : it->second;
}

server_probe::server_probe(const char* bench, int port) : bench_(bench), port_(port) {
  if (port <= 0) die(bench, "--port is required (bench/run passes the server's)");
  ctx_ = redisConnect("127.0.0.1", port);
  if (ctx_ == nullptr || ctx_->err != 0) die(bench, "cannot connect to redis-server on port " + std::to_string(port));
}

server_probe::~server_probe() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

redisReply* server_probe::run(const char* format, ...) {
  va_list args;
  va_start(args, format);
  auto* reply = static_cast<redisReply*>(redisvCommand(ctx_, format, args));
  va_end(args);
  if (reply == nullptr) die(bench_, std::string("server query failed: ") + ctx_->errstr);
  if (reply->type == REDIS_REPLY_ERROR) die(bench_, std::string("server error: ") + reply->str);
  return reply;
}

std::string cluster_url(const std::string& ports) {
  std::string url = "redis+cluster://";
  std::istringstream in(ports);
  bool first = true;
  for (std::string p; std::getline(in, p, ',');) {
    url += (first ? "127.0.0.1:" : ",127.0.0.1:") + p;
    first = false;
  }
  return url;
}

int cluster_node_serving(const char* bench, const std::string& ports, const std::string& key) {
  std::istringstream in(ports);
  for (std::string p; std::getline(in, p, ',');) {
    if (server_probe(bench, std::stoi(p)).owns(key)) return std::stoi(p);
  }
  die(bench, "no master in " + ports + " serves " + key);
}

bool server_probe::owns(const std::string& key) {
  auto* reply = static_cast<redisReply*>(redisCommand(ctx_, "EXISTS %b", key.data(), key.size()));
  if (reply == nullptr) die(bench_, std::string("server query failed: ") + ctx_->errstr);
  const bool mine = reply->type != REDIS_REPLY_ERROR;
  freeReplyObject(reply);
  return mine;
}

command_counts parse_commandstats(const std::string& info) {
  command_counts counts;
  std::istringstream lines(info);
  std::string line;
  // cmdstat_evalsha:calls=600000,usec=...   (subcommands: cmdstat_script|load:...)
  while (std::getline(lines, line)) {
    if (line.compare(0, 8, "cmdstat_") != 0) continue;
    const auto colon = line.find(':');
    const auto calls = line.find("calls=", colon);
    const auto usec = line.find(",usec=", colon);
    if (colon == std::string::npos || calls == std::string::npos || usec == std::string::npos) continue;
    counts[line.substr(8, colon - 8)] = {std::strtoull(line.c_str() + calls + 6, nullptr, 10),
                                         std::strtoull(line.c_str() + usec + 6, nullptr, 10)};
  }
  return counts;
}

command_counts server_probe::commandstats() {
  redisReply* reply = run("INFO commandstats");
  const std::string info(reply->str, reply->len);
  freeReplyObject(reply);
  return parse_commandstats(info);
}

long long server_probe::pttl(const std::string& key) {
  redisReply* reply = run("PTTL %b", key.data(), key.size());
  const long long v = reply->integer;
  freeReplyObject(reply);
  return v;
}

void server_probe::del(const std::string& key) { freeReplyObject(run("DEL %b", key.data(), key.size())); }

std::string server_probe::load_script(const deadbolt::detail::script& s) {
  redisReply* reply = run("SCRIPT LOAD %b", s.body.data(), s.body.size());
  std::string sha(reply->str, reply->len);
  freeReplyObject(reply);
  if (sha != s.sha1) die(bench_, "SCRIPT LOAD answered another SHA1 than the library's for " + std::string(s.name));
  return sha;
}

double server_probe::raw_slice_per_s(const std::string& sha, const std::string& key, const std::string& arg1,
                                     const std::string& arg2, double seconds) {
  const clock_type::time_point start = clock_type::now();
  long requests = 0;
  double elapsed = 0;
  do {
    freeReplyObject(run("EVALSHA %s 1 %b %b %b", sha.c_str(), key.data(), key.size(), arg1.data(), arg1.size(),
                        arg2.data(), arg2.size()));
    ++requests;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  return static_cast<double>(requests) / elapsed;
}

void server_probe::take_reply() {
  void* reply = nullptr;
  if (redisGetReply(ctx_, &reply) != REDIS_OK) die(bench_, std::string("server query failed: ") + ctx_->errstr);
  const bool error = static_cast<redisReply*>(reply)->type == REDIS_REPLY_ERROR;
  const std::string text = error ? static_cast<redisReply*>(reply)->str : "";
  freeReplyObject(reply);
  if (error) die(bench_, "server error: " + text);
}

double server_probe::raw_pair_slice_per_s(const std::string& acquire_sha, const std::string& unlock_sha,
                                          const std::string& key, const std::string& lease, const std::string& owner,
                                          double seconds) {
  // The library's own names for the lock (hash-tagged names included).
  const auto names = deadbolt::detail::make_lock_names<deadbolt::detail::lock_kind::reentrant>(key);
  const std::string& channel = names->channel;
  const std::string latch_prefix = names->latch_prefix + ":";
  std::string latch;
  char id[33];
  const clock_type::time_point start = clock_type::now();
  long pairs = 0;
  double elapsed = 0;
  do {
    if (!latch.empty()) redisAppendCommand(ctx_, "DEL %b", latch.data(), latch.size());
    redisAppendCommand(ctx_, "EVALSHA %s 1 %b %b %b", acquire_sha.c_str(), key.data(), key.size(), lease.data(),
                       lease.size(), owner.data(), owner.size());
    if (!latch.empty()) take_reply();
    take_reply();
    std::snprintf(id, sizeof id, "%032lx", static_cast<unsigned long>(++latch_serial_));
    latch = latch_prefix + id;
    redisAppendCommand(ctx_, "EVALSHA %s 3 %b %b %b 0 %b %b publish 25000", unlock_sha.c_str(), key.data(),
                       key.size(), channel.data(), channel.size(), latch.data(), latch.size(), lease.data(),
                       lease.size(), owner.data(), owner.size());
    take_reply();
    ++pairs;
    elapsed = seconds_since(start);
  } while (elapsed < seconds);
  redisAppendCommand(ctx_, "DEL %b", latch.data(), latch.size());
  take_reply();
  return static_cast<double>(pairs) / elapsed;
}

double raw_evalsha_per_s(server_probe& probe, const std::string& sha, int clients, int pipeline, long requests,
                         double* server_us_per_call) {
  const double rate = raw_evalsha_args_per_s(probe, sha, std::string("1 ") + raw_key + " 30000 owner:1", clients,
                                             pipeline, requests, server_us_per_call);
  probe.del(raw_key);
  return rate;
}

double redis_benchmark_evalsha(const std::string& command) {
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) die("redis-benchmark", "cannot run: " + command);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  if (pclose(out) != 0) die("redis-benchmark", "failed: " + command + "\n" + text);
  // --csv: a header line, then "EVALSHA ...","<requests per second>","<avg latency>",...
  const auto row = text.find("\n\"EVALSHA");
  const auto field = row == std::string::npos ? row : text.find("\",\"", row + 1);
  if (field == std::string::npos) die("redis-benchmark", "unexpected output:\n" + text);
  const double rate = std::strtod(text.c_str() + field + 3, nullptr);
  if (!(rate > 0)) die("redis-benchmark", "unexpected output:\n" + text);
  return rate;
}

double raw_cluster_evalsha_per_s(int seed_port, const std::string& sha, int clients, int pipeline, long requests,
                                 long keyspace) {
  return redis_benchmark_evalsha("redis-benchmark --cluster -h 127.0.0.1 -p " + std::to_string(seed_port) + " -c " +
                                 std::to_string(clients) + " -P " + std::to_string(pipeline) + " -n " +
                                 std::to_string(requests) + " -r " + std::to_string(keyspace) + " --csv EVALSHA " +
                                 sha + " 1 bench-raw:{tag}:__rand_int__ 30000 owner:1");
}

double raw_evalsha_args_per_s(server_probe& probe, const std::string& sha, const std::string& args, int clients,
                              int pipeline, long requests, double* server_us_per_call) {
  const command_counts before = probe.commandstats();
  const double rate = redis_benchmark_evalsha("redis-benchmark -h 127.0.0.1 -p " + std::to_string(probe.port()) +
                                              " -c " + std::to_string(clients) + " -P " + std::to_string(pipeline) +
                                              " -n " + std::to_string(requests) + " --csv EVALSHA " + sha + " " + args);
  if (server_us_per_call != nullptr) {
    const command_stat d = delta_stat(before, probe.commandstats(), "evalsha");
    *server_us_per_call = static_cast<double>(d.usec) / static_cast<double>(d.calls);
  }
  return rate;
}

}  // namespace deadbolt::bench
