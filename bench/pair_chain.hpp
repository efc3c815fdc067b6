// The uncontended lock benchmarks' client side (lock_uncontended, lock_uncontended_tls,
// lock_uncontended_replica): one owner on the async API chains lock -> unlock -> lock ... on one lock,
// the callbacks running on the io thread, and each client slice's rate is compared with the raw slices
// on either side of it.
#pragma once

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "server_probe.hpp"

namespace deadbolt::bench {

/// Connects `client` by running `io` until async_connect answers; dies if it fails.
inline void connect_or_die(const char* bench, asio::io_context& io, deadbolt::client& client) {
  std::error_code connect_error = make_error_code(deadbolt::errc::not_connected);
  client.async_connect([&](std::error_code ec) {
    connect_error = ec;
    io.stop();
  });
  io.restart();
  io.run();
  if (connect_error) die(bench, "connect: " + connect_error.message());
}

struct pair_result {
  double pairs_per_s = 0;
  std::size_t allocations = 0;
  double cpu_us = 0;  // the client process's CPU time over the measured part
  long pairs = 0;     // measured
};

// lock -> unlock -> lock ... : `warm` pairs, then pairs for `seconds`; allocations and time are taken
// over the measured pairs only, from inside the chain (so the first call, made from outside the io
// thread, is not counted).
class pair_chain {
 public:
  static constexpr deadbolt::owner_id owner = 1;

  pair_chain(const char* bench, asio::io_context& io, deadbolt::reentrant_lock lock, std::chrono::milliseconds lease,
             long warm, double seconds)
      : bench_(bench), io_(io), lock_(std::move(lock)), lease_(lease), warm_(warm), seconds_wanted_(seconds) {}

  pair_result run() {
    asio::post(io_, [this] { next(); });
    io_.restart();
    io_.run();
    if (!error_.empty()) die(bench_, error_);
    const long measured = done_ - warm_;
    return {static_cast<double>(measured) / seconds_, allocations_, cpu_us_, measured};
  }

 private:
  void next() {
    if (done_ == warm_) {
      start_counting_allocations();
      start_ = clock_type::now();
      cpu_start_ = process_cpu_us();
    }
    lock_.async_try_lock(owner, std::chrono::milliseconds(0), lease_, [this](std::error_code ec, bool acquired) {
      if (ec || !acquired) return fail(ec ? "lock: " + ec.message() : "lock: not acquired (uncontended?)");
      lock_.async_unlock(owner, [this](std::error_code ec) {
        if (ec) return fail("unlock: " + ec.message());
        ++done_;
        if (done_ <= warm_ || seconds_since(start_) < seconds_wanted_) return next();
        allocations_ = stop_counting_allocations();
        seconds_ = seconds_since(start_);
        cpu_us_ = process_cpu_us() - cpu_start_;
        io_.stop();
      });
    });
  }
  void fail(const std::string& what) {
    stop_counting_allocations();
    error_ = what;
    io_.stop();
  }

  const char* bench_;
  asio::io_context& io_;
  deadbolt::reentrant_lock lock_;
  std::chrono::milliseconds lease_;
  long warm_, done_ = 0;
  double seconds_wanted_;
  clock_type::time_point start_;
  double seconds_ = 0;
  double cpu_start_ = 0, cpu_us_ = 0;
  std::size_t allocations_ = 0;
  std::string error_;
};

// One kind of client slice over all its slices: each one's ratio to the raw limit for pairs (the raw
// EVALSHA rate / 2: a pair is two round trips).
struct slice_ratios {
  std::vector<double> ratios;
  std::vector<pair_result> runs;
  std::vector<double> limits;  // each slice's limit in pairs per second: raw / 2
  double allocs_per_pair = 0;  // the worst slice's

  void add(const pair_result& r, double raw_per_s) {
    runs.push_back(r);
    limits.push_back(raw_per_s / 2);
    ratios.push_back(r.pairs_per_s / (raw_per_s / 2));
    if (r.pairs > 0) {
      allocs_per_pair = std::max(allocs_per_pair, static_cast<double>(r.allocations) / static_cast<double>(r.pairs));
    }
  }
  double quantile(double q) const {
    std::vector<double> v = ratios;
    std::sort(v.begin(), v.end());
    return v[static_cast<std::size_t>(q * static_cast<double>(v.size() - 1) + 0.5)];
  }
  /// The slice with the median ratio.
  std::size_t median() const { return median_index(ratios); }
  double cpu_us_per_pair(std::size_t i) const {
    return runs[i].cpu_us / static_cast<double>(std::max(runs[i].pairs, 1L));
  }
};

// Client slices interleaved with raw slices: raw, client, raw, client, ..., raw. The machine's speed
// drifts within seconds, but a few hundred milliseconds apart it is nearly the same, so each client
// slice is compared with the mean of the raw slices on either side of it.
class interleaved_slices {
 public:
  /// `raw_slice` measures one raw slice (requests per second); the first runs here.
  explicit interleaved_slices(std::function<double()> raw_slice)
      : raw_slice_(std::move(raw_slice)), last_raw_(raw_slice_()) {}

  /// Runs `client_slice` (a pair_result()), then the next raw slice, and adds the client slice to
  /// `into` against the mean of the raw slices before and after it.
  template <class ClientSlice>
  pair_result next(slice_ratios& into, ClientSlice&& client_slice) {
    const pair_result r = client_slice();
    const double raw_after = raw_slice_();
    into.add(r, (last_raw_ + raw_after) / 2);
    raws_.push_back(last_raw_);
    last_raw_ = raw_after;
    return r;
  }

  /// The median of all raw slices so far.
  double raw_median() const {
    std::vector<double> all = raws_;
    all.push_back(last_raw_);
    return all[median_index(all)];
  }

 private:
  std::function<double()> raw_slice_;
  double last_raw_;
  std::vector<double> raws_;
};

}  // namespace deadbolt::bench
