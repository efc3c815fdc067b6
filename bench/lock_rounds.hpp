// The rounds of lock_many and lock_many_cluster: every round starts all the locks' acquisitions at
// once (a fixed lease); each lock is unlocked as soon as it is acquired; the round ends when every
// unlock has completed, and the next begins. Allocations and CPU time are counted over the measured
// rounds only.
#pragma once

#include <chrono>
#include <string>
#include <system_error>
#include <vector>

#include "alloc_counter.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "server_probe.hpp"

namespace deadbolt::bench {

inline constexpr deadbolt::owner_id rounds_owner = 1;

struct run_result {
  double pairs_per_s = 0;
  std::size_t allocations = 0;
  double cpu_us = 0;  // the client process's CPU time over the measured part
};

class rounds_runner {
 public:
  rounds_runner(const char* bench, asio::io_context& io, std::vector<deadbolt::reentrant_lock>& locks,
                std::chrono::milliseconds lease, long warm_rounds, long measured_rounds)
      : bench_(bench), io_(io), locks_(locks), lease_(lease), warm_(warm_rounds), total_(warm_rounds + measured_rounds) {}

  run_result run() {
    asio::post(io_, [this] { start_round(); });
    io_.restart();
    io_.run();
    if (!error_.empty()) die(bench_, error_);
    const double pairs = static_cast<double>(total_ - warm_) * static_cast<double>(locks_.size());
    return {pairs / seconds_, allocations_, cpu_us_};
  }

 private:
  void start_round() {
    if (round_ == warm_) {
      start_counting_allocations();
      start_ = clock_type::now();
      cpu_start_ = process_cpu_us();
    }
    outstanding_ = locks_.size();
    for (auto& lock : locks_) {
      lock.async_lock(rounds_owner, lease_, [this, &lock](std::error_code ec) {
        if (ec) return fail("lock " + lock.name() + ": " + ec.message());
        lock.async_unlock(rounds_owner, [this](std::error_code ec) {
          if (ec) return fail("unlock: " + ec.message());
          if (--outstanding_ > 0) return;
          if (++round_ < total_) return start_round();
          allocations_ = stop_counting_allocations();
          seconds_ = seconds_since(start_);
          cpu_us_ = process_cpu_us() - cpu_start_;
          io_.stop();
        });
      });
    }
  }
  void fail(const std::string& what) {
    stop_counting_allocations();
    if (error_.empty()) error_ = what;
    io_.stop();
  }

  const char* bench_;
  asio::io_context& io_;
  std::vector<deadbolt::reentrant_lock>& locks_;
  std::chrono::milliseconds lease_;
  long warm_, total_, round_ = 0;
  std::size_t outstanding_ = 0;
  clock_type::time_point start_;
  double seconds_ = 0;
  double cpu_start_ = 0, cpu_us_ = 0;
  std::size_t allocations_ = 0;
  std::string error_;
};

}  // namespace deadbolt::bench
