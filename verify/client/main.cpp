// verify_client: the mutex workload of verify/ (docs/verification.md) through the C++ library, one
// client per process, many workers on it, so that one client lives across many faults and many
// operations share its connections. It prints the history (JSON lines) on standard output; the
// harness (verify/workload/library.py) records them and stops it with SIGTERM: every worker then
// finishes the operation it is in, and the process exits 0.
//
//   verify_client --url URL --store-port PORT --fence-script FILE [options]
//     --api blocking|async   which API the workers use (default blocking)
//     --process NAME         the history's process name (default l1)
//     --workers N            threads (blocking) or concurrent chains (async) on the one client (4)
//     --locks N              locks the workers spread over, each with its register (1)
//     --lock NAME            the lock's name, or the locks' prefix (verify-mutex)
//     --lease-ms N           fixed lease; 0: the watchdog (default 0)
//     --watchdog-ms N        config::watchdog_timeout (default 3000: renewed every second)
//     --wait-ms N            each acquire's wait (6000)
//     --work-ms N            the longest pause between a read and its write (100)
//     --increments N         read-modify-writes per hold (1)
//     --think-ms N           the longest pause between a release and the next acquire (0)
//     --kind mutex|semaphore|read-write|fair|multi|red   the workload (default mutex; the others: blocking
//                            API, no register: `--increments` steps of work per read/write or fair hold)
//     --permits N            the semaphore's permits (2)
//     --red-urls URL,URL,... --kind red: a red lock over one client per URL (independent servers)
//     --replica-sync auto|off
//     --unfenced             the store is not given the token (a resource without fencing)
//     --connect-timeout-ms N, --command-timeout-ms N   (1000, 3000)
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>

#include <asio/executor_work_guard.hpp>
#include <asio/io_context.hpp>
#include <deadbolt/blocking.hpp>
#include <deadbolt/client.hpp>
#include <deadbolt/observability.hpp>

#include "history.hpp"
#include "workload.hpp"

namespace {

std::atomic<bool> stop{false};

extern "C" void on_stop_signal(int) { stop = true; }

/// The watchdog's renewals, as the library reports them (not tied to one hold: a batch renews many).
class renewal_recorder : public deadbolt::metrics_hook {
 public:
  explicit renewal_recorder(std::string process) : process_(std::move(process)) {}
  void on_renewal(std::size_t holds) override {
    verify::event(process_, "ok", "renewal").with("holds", static_cast<std::int64_t>(holds)).emit();
  }
  void on_renewal_failure(std::size_t holds, std::error_code error) override {
    verify::event(process_, "fail", "renewal").with("holds", static_cast<std::int64_t>(holds))
        .with("error", error.message()).emit();
  }

 private:
  std::string process_;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr, "verify_client: %s (see the comment at the top of verify/client/main.cpp)\n", why.c_str());
  std::exit(2);
}

long number(const char* flag, const char* text) {
  char* end = nullptr;
  const long n = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || n < 0) usage(std::string(flag) + " wants a non-negative number, not '" + text + "'");
  return n;
}

}  // namespace

int main(int argc, char** argv) {
  verify::workload_options o;
  o.watchdog = std::chrono::milliseconds(3000);
  std::string url, api = "blocking", script_file, sync = "auto", red_urls;
  long store_port = 0, connect_ms = 1000, command_ms = 3000;
  bool fenced = true;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    if (flag == "--unfenced") {
      fenced = false;
      continue;
    }
    if (i + 1 >= argc) usage(flag + " wants a value");
    const char* value = argv[++i];
    if (flag == "--url") url = value;
    else if (flag == "--store-port") store_port = number(argv[i - 1], value);
    else if (flag == "--fence-script") script_file = value;
    else if (flag == "--api") api = value;
    else if (flag == "--process") o.process = value;
    else if (flag == "--workers") o.workers = static_cast<int>(number(argv[i - 1], value));
    else if (flag == "--locks") o.locks = static_cast<int>(number(argv[i - 1], value));
    else if (flag == "--lock") o.lock = value;
    else if (flag == "--lease-ms") o.lease = std::chrono::milliseconds(number(argv[i - 1], value));
    else if (flag == "--watchdog-ms") o.watchdog = std::chrono::milliseconds(number(argv[i - 1], value));
    else if (flag == "--wait-ms") o.wait = std::chrono::milliseconds(number(argv[i - 1], value));
    else if (flag == "--work-ms") o.work = std::chrono::milliseconds(number(argv[i - 1], value));
    else if (flag == "--increments") o.increments = static_cast<int>(number(argv[i - 1], value));
    else if (flag == "--think-ms") o.think = std::chrono::milliseconds(number(argv[i - 1], value));
    else if (flag == "--kind") o.kind = value;
    else if (flag == "--permits") o.permits = static_cast<int>(number(argv[i - 1], value));
    else if (flag == "--red-urls") red_urls = value;
    else if (flag == "--replica-sync") sync = value;
    else if (flag == "--connect-timeout-ms") connect_ms = number(argv[i - 1], value);
    else if (flag == "--command-timeout-ms") command_ms = number(argv[i - 1], value);
    else usage("unknown option " + flag);
  }
  if (url.empty() || store_port == 0 || script_file.empty()) usage("--url, --store-port and --fence-script are needed");
  if (api != "blocking" && api != "async") usage("--api is blocking or async");
  if (sync != "auto" && sync != "off") usage("--replica-sync is auto or off");
  if (o.workers < 1 || o.locks < 1) usage("--workers and --locks are at least 1");
  if (o.kind != "mutex" && o.kind != "semaphore" && o.kind != "read-write" && o.kind != "fair" && o.kind != "red" &&
      o.kind != "multi") {
    usage("--kind is mutex, semaphore, read-write, fair, multi or red");
  }
  if ((o.kind == "red") != !red_urls.empty()) usage("--kind red and --red-urls go together");
  if (o.kind != "mutex" && api != "blocking") usage("--kind " + o.kind + " runs through the blocking API only");
  std::ifstream in(script_file);
  std::stringstream script;
  script << in.rdbuf();
  if (!in || script.str().empty()) usage("cannot read " + script_file);

  std::signal(SIGTERM, on_stop_signal);
  std::signal(SIGINT, on_stop_signal);

  deadbolt::config cfg;
  cfg.url = url;
  cfg.client_name = "verify-" + o.process;
  cfg.connect_timeout = std::chrono::milliseconds(connect_ms);
  cfg.command_timeout = std::chrono::milliseconds(command_ms);
  cfg.watchdog_timeout = o.watchdog;
  cfg.replica_sync = sync == "off" ? deadbolt::replica_sync_mode::off : deadbolt::replica_sync_mode::automatic;
  cfg.metrics = std::make_shared<renewal_recorder>(o.process);
  deadbolt::config store_cfg;
  store_cfg.url = "redis://127.0.0.1:" + std::to_string(store_port);
  store_cfg.client_name = "verify-store-" + o.process;
  store_cfg.connect_timeout = std::chrono::milliseconds(connect_ms);
  store_cfg.command_timeout = std::chrono::milliseconds(2000);

  // The store's client (and the async workload's lock client) run on this io_context's thread.
  asio::io_context io;
  auto work = asio::make_work_guard(io);
  std::thread loop([&io] { io.run(); });
  verify::hold_table holds;
  auto lease_lost = [&holds, &o](std::string_view lock, std::int64_t owner) {
    const std::string hold = holds.find(std::string(lock), owner);
    verify::event e(o.process, "info", "lease-lost");
    if (!hold.empty()) e.with("hold", hold);
    e.with("lock", lock).with("source", "on_lease_lost").emit();
  };
  int status = 0;
  {
    deadbolt::client store_client(io.get_executor(), store_cfg);
    verify::fenced_store store(store_client, script.str(), fenced);
    if (api == "blocking") {
      deadbolt::blocking_client client(cfg);
      if (client.config_error()) usage("bad config: " + client.config_error().message());
      client.on_lease_lost(lease_lost);
      if (o.kind == "semaphore") verify::run_semaphore(o, client, stop);
      else if (o.kind == "read-write") verify::run_read_write(o, client, holds, stop);
      else if (o.kind == "fair") verify::run_fair(o, client, holds, stop);
      else if (o.kind == "multi") verify::run_multi(o, client, holds, stop);
      else if (o.kind == "red") {
        std::vector<std::unique_ptr<deadbolt::blocking_client>> members;
        for (std::size_t from = 0; from <= red_urls.size();) {
          const std::size_t comma = std::min(red_urls.find(',', from), red_urls.size());
          deadbolt::config member = cfg;
          member.url = red_urls.substr(from, comma - from);
          members.push_back(std::make_unique<deadbolt::blocking_client>(member));
          if (members.back()->config_error()) usage("bad --red-urls member: " + member.url);
          members.back()->on_lease_lost(lease_lost);
          from = comma + 1;
        }
        verify::run_red(o, members, holds, stop);
      }
      else verify::run_blocking(o, client, store, holds, stop);
    } else {
      deadbolt::client client(io.get_executor(), cfg);
      if (client.config_error()) usage("bad config: " + client.config_error().message());
      client.on_lease_lost(lease_lost);
      verify::run_async(o, client, store, holds, stop);
    }
  }
  work.reset();
  loop.join();
  return status;
}
