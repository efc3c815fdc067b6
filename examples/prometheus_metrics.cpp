// prometheus_metrics: a metrics hook (config::metrics) that keeps deadbolt's events as Prometheus
// counters, gauges and histograms, and prints them in Prometheus' text exposition format, as a
// /metrics endpoint would serve them. A log hook (config::log) prints the client's log lines.
//
// Two threads take one lock in turn (the second waits while the first holds it past a renewal period),
// so the output shows a contended wait, hold times and watchdog renewals.
//
//   prometheus_metrics [redis://host:port]     (default: $REDIS_URL, else redis://127.0.0.1:6379)
#include <array>
#include <atomic>
#include <chrono>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>

#include <deadbolt/deadbolt.hpp>

using namespace std::chrono_literals;

namespace {

// A Prometheus histogram of durations, in seconds. Atomics: the client's loop thread observes while
// another thread (the one serving /metrics) renders.
class duration_histogram {
 public:
  void observe(std::chrono::nanoseconds d) {
    const double seconds = std::chrono::duration<double>(d).count();
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      if (seconds <= bounds[i]) ++buckets_[i];  // Prometheus buckets are cumulative
    }
    ++count_;
    sum_ns_ += static_cast<std::uint64_t>(d.count() > 0 ? d.count() : 0);
  }
  void render(std::string& out, const char* name, const char* help) const {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " histogram\n";
    char line[160];
    for (std::size_t i = 0; i < bounds.size(); ++i) {
      std::snprintf(line, sizeof line, "%s_bucket{le=\"%g\"} %" PRIu64 "\n", name, bounds[i], buckets_[i].load());
      out += line;
    }
    std::snprintf(line, sizeof line, "%s_bucket{le=\"+Inf\"} %" PRIu64 "\n%s_sum %.6f\n%s_count %" PRIu64 "\n", name,
                  count_.load(), name, static_cast<double>(sum_ns_.load()) / 1e9, name, count_.load());
    out += line;
  }

 private:
  static constexpr std::array<double, 8> bounds{0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5};
  std::array<std::atomic<std::uint64_t>, 8> buckets_{};
  std::atomic<std::uint64_t> count_{0}, sum_ns_{0};
};

class prometheus_metrics final : public deadbolt::metrics_hook {
 public:
  void on_acquire(const deadbolt::acquire_sample& s) override {
    ++acquires_[s.error ? 2 : s.acquired ? 0 : 1];
    wait_.observe(s.waited);
  }
  void on_release(std::string_view, std::chrono::nanoseconds held) override { hold_.observe(held); }
  void on_renewal(std::size_t holds) override { renewals_ += holds; }
  void on_renewal_failure(std::size_t holds, std::error_code) override { renewal_failures_ += holds; }
  void on_lease_lost(std::string_view) override { ++lease_lost_; }
  void on_reconnect(deadbolt::connection_role role) override { ++reconnects_[index(role)]; }
  void on_disconnect(deadbolt::connection_role role, std::error_code) override { ++disconnects_[index(role)]; }
  void on_table_use(deadbolt::table_kind table, std::size_t used, std::size_t capacity) override {
    used_[index(table)] = used;
    capacity_[index(table)] = capacity;
  }
  void on_table_full(deadbolt::table_kind table) override { ++full_[index(table)]; }

  std::uint64_t acquired() const { return acquires_[0]; }

  /// The text exposition format (https://prometheus.io/docs/instrumenting/exposition_formats/).
  std::string render() const {
    std::string out;
    counter(out, "deadbolt_acquires_total", "Lock acquisitions by result.");
    const char* const results[] = {"acquired", "not_acquired", "failed"};
    for (int i = 0; i < 3; ++i) sample(out, "deadbolt_acquires_total", "result", results[i], acquires_[i]);
    wait_.render(out, "deadbolt_acquire_wait_seconds", "Time from an acquire call to its completion.");
    hold_.render(out, "deadbolt_hold_seconds", "Time a lock was held, to its owner's last unlock.");
    counter(out, "deadbolt_renewals_total", "Leases renewed by the watchdog.");
    sample(out, "deadbolt_renewals_total", nullptr, nullptr, renewals_);
    counter(out, "deadbolt_renewal_failures_total", "Leases in renewal batches that got no answer.");
    sample(out, "deadbolt_renewal_failures_total", nullptr, nullptr, renewal_failures_);
    counter(out, "deadbolt_lease_lost_total", "Held locks whose lease was found lost.");
    sample(out, "deadbolt_lease_lost_total", nullptr, nullptr, lease_lost_);
    const char* const roles[] = {"command", "subscriber"};
    counter(out, "deadbolt_reconnects_total", "Connections that came back up after being lost.");
    for (int i = 0; i < 2; ++i) sample(out, "deadbolt_reconnects_total", "connection", roles[i], reconnects_[i]);
    counter(out, "deadbolt_disconnects_total", "Connections lost.");
    for (int i = 0; i < 2; ++i) sample(out, "deadbolt_disconnects_total", "connection", roles[i], disconnects_[i]);
    const char* const tables[] = {"waiters", "channels", "held_locks"};
    gauge(out, "deadbolt_table_used", "Entries in use in a fixed-capacity table.");
    for (int i = 0; i < 2; ++i) sample(out, "deadbolt_table_used", "table", tables[i], used_[i]);
    gauge(out, "deadbolt_table_capacity", "Capacity of a fixed-capacity table.");
    for (int i = 0; i < 2; ++i) sample(out, "deadbolt_table_capacity", "table", tables[i], capacity_[i]);
    counter(out, "deadbolt_table_full_total", "Operations refused because a table was full.");
    for (int i = 0; i < 3; ++i) sample(out, "deadbolt_table_full_total", "table", tables[i], full_[i]);
    return out;
  }

 private:
  static int index(deadbolt::connection_role r) { return r == deadbolt::connection_role::command ? 0 : 1; }
  static int index(deadbolt::table_kind t) { return static_cast<int>(t); }
  static void counter(std::string& out, const char* name, const char* help) { header(out, name, help, "counter"); }
  static void gauge(std::string& out, const char* name, const char* help) { header(out, name, help, "gauge"); }
  static void header(std::string& out, const char* name, const char* help, const char* type) {
    out += std::string("# HELP ") + name + " " + help + "\n# TYPE " + name + " " + type + "\n";
  }
  template <typename Number>
  static void sample(std::string& out, const char* name, const char* label, const char* value,
                     const std::atomic<Number>& n) {
    out += name;
    if (label != nullptr) out += std::string("{") + label + "=\"" + value + "\"}";
    out += " " + std::to_string(n.load()) + "\n";
  }

  std::atomic<std::uint64_t> acquires_[3] = {};  // acquired, not acquired (wait ran out), failed
  duration_histogram wait_, hold_;
  std::atomic<std::uint64_t> renewals_{0}, renewal_failures_{0}, lease_lost_{0};
  std::atomic<std::uint64_t> reconnects_[2] = {}, disconnects_[2] = {};
  std::atomic<std::size_t> used_[3] = {}, capacity_[3] = {};
  std::atomic<std::uint64_t> full_[3] = {};
};

}  // namespace

int main(int argc, char** argv) {
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // keep stdout and stderr in order when piped
  deadbolt::config cfg;
  if (argc > 1) {
    cfg.url = argv[1];
  } else if (const char* env = std::getenv("REDIS_URL")) {
    cfg.url = env;
  }
  cfg.watchdog_timeout = 600ms;  // renewed every 200 ms: short, so this run shows renewals
  auto metrics = std::make_shared<prometheus_metrics>();
  cfg.metrics = metrics;
  // Called on the client's loop thread: print and return, never block.
  cfg.log = [](deadbolt::log_level level, std::string_view message) {
    std::fprintf(stderr, "deadbolt %s: %.*s\n", deadbolt::to_string(level), static_cast<int>(message.size()),
                 message.data());
  };

  deadbolt::blocking_client client(cfg);
  if (std::error_code ec = client.connect()) {
    std::fprintf(stderr, "cannot connect to %s: %s\n", cfg.url.c_str(), ec.message().c_str());
    return 1;
  }
  deadbolt::blocking_lock lock = client.lock("deadbolt-example:prometheus-metrics");

  // The first thread holds the lock past a renewal period; the second waits for it meanwhile.
  std::atomic<bool> failed{false};
  auto worker = [&](std::chrono::milliseconds start_after) {
    std::this_thread::sleep_for(start_after);
    std::error_code ec;
    {
      deadbolt::checked_guard guard(lock, ec);
      if (!guard) {
        failed = true;
        return;
      }
      std::this_thread::sleep_for(450ms);  // the work
    }
    if (ec) failed = true;  // the release's outcome (lease_lost would be reported here)
  };
  std::thread first(worker, 0ms), second(worker, 100ms);
  first.join();
  second.join();

  std::fputs(metrics->render().c_str(), stdout);
  const bool ok = !failed && metrics->acquired() == 2;
  std::printf("prometheus_metrics: %s\n", ok ? "ok" : "FAILED");
  return ok ? 0 : 1;
}
