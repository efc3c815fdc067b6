#include "tls_cli.hpp"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <utility>

namespace deadbolt::bench {

tls_cli::tls_cli(const char* bench, int port, std::string ca_file)
    : bench_(bench), port_(port), ca_file_(std::move(ca_file)) {
  if (port <= 0 || ca_file_.empty()) die(bench, "--tls-port and --ca-file are required (bench/run passes them)");
  if (ca_file_.find('\'') != std::string::npos) die(bench, "--ca-file must not contain a quote");
}

std::string tls_cli::tls_options() const {
  return "--tls --cacert '" + ca_file_ + "' -h 127.0.0.1 -p " + std::to_string(port_);
}

std::string tls_cli::run(const std::string& arguments) {
  const std::string command = "redis-cli " + tls_options() + " " + arguments;
  FILE* out = popen(command.c_str(), "r");
  if (out == nullptr) die(bench_, "cannot run: " + command);
  std::string text;
  char buffer[4096];
  for (std::size_t n; (n = std::fread(buffer, 1, sizeof buffer, out)) > 0;) text.append(buffer, n);
  // redis-cli exits 0 after an error reply too (it prints "ERR ...", "NOSCRIPT ..."): the callers check
  // that they got what they asked for.
  if (pclose(out) != 0) die(bench_, "failed: " + command + "\n" + text);
  return text;
}

command_counts tls_cli::commandstats() {
  const std::string info = run("INFO commandstats");
  command_counts counts = parse_commandstats(info);
  if (counts.empty()) die(bench_, "INFO commandstats answered:\n" + info);
  return counts;
}

void tls_cli::del(const std::string& key) {
  const std::string reply = run("DEL " + key);
  if (reply != "0\n" && reply != "1\n") die(bench_, "DEL answered: " + reply);
}

std::string tls_cli::load_script(const deadbolt::detail::script& s) {
  // The body through a file and -x (the last argument from standard input): it has quotes and newlines.
  char path[] = "/tmp/deadbolt-bench-script-XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) die(bench_, "cannot make a temporary file");
  const bool written = write(fd, s.body.data(), s.body.size()) == static_cast<ssize_t>(s.body.size());
  close(fd);
  std::string sha = written ? run("-x SCRIPT LOAD < " + std::string(path)) : std::string();
  unlink(path);
  while (!sha.empty() && (sha.back() == '\n' || sha.back() == '\r')) sha.pop_back();
  if (sha != s.sha1) die(bench_, "SCRIPT LOAD answered another SHA1 than the library's for " + std::string(s.name));
  return sha;
}

double tls_cli::raw_evalsha_per_s(const std::string& sha, const std::string& args, long requests) {
  return redis_benchmark_evalsha("redis-benchmark " + tls_options() + " -c 1 -P 1 -n " + std::to_string(requests) +
                                 " --csv EVALSHA " + sha + " " + args);
}

}  // namespace deadbolt::bench
