// The TLS benchmark's side channel to its server, which speaks only TLS (hiredis 0.14, the probe's,
// has no TLS): redis-cli and redis-benchmark with --tls and the run's CA, verification on.
#pragma once

#include <string>

#include "scripts.hpp"  // the library's embedded scripts (src/generated)
#include "server_probe.hpp"

namespace deadbolt::bench {

class tls_cli {
 public:
  tls_cli(const char* bench, int port, std::string ca_file);

  int port() const { return port_; }
  /// redis-cli's output for `arguments` (shell words, quoted by the caller); dies if redis-cli fails,
  /// but not on an error reply (the callers check the answer).
  std::string run(const std::string& arguments);
  command_counts commandstats();
  void del(const std::string& key);
  /// SCRIPT LOAD of one of the library's embedded scripts; returns its SHA1 (dies if it is not the
  /// library's).
  std::string load_script(const deadbolt::detail::script& s);
  /// `redis-benchmark --tls -c 1 -P 1 -n requests` EVALSHA `sha` with `args` ("1 key arg..."): the raw
  /// c1P1 limit over TLS, in requests per second. Its own TLS handshake is not timed.
  double raw_evalsha_per_s(const std::string& sha, const std::string& args, long requests);

 private:
  std::string tls_options() const;
  const char* bench_;
  int port_;
  std::string ca_file_;
};

}  // namespace deadbolt::bench
