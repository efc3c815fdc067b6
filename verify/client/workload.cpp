#include "workload.hpp"

namespace verify {

void hold_table::set(const std::string& lock, std::int64_t owner, std::string hold) {
  std::lock_guard<std::mutex> guard(mutex_);
  holds_[{lock, owner}] = std::move(hold);
}

void hold_table::clear(const std::string& lock, std::int64_t owner) {
  std::lock_guard<std::mutex> guard(mutex_);
  holds_.erase({lock, owner});
}

std::string hold_table::find(const std::string& lock, std::int64_t owner) const {
  std::lock_guard<std::mutex> guard(mutex_);
  const auto it = holds_.find({lock, owner});
  return it == holds_.end() ? std::string() : it->second;
}

std::string lock_of(const workload_options& o, int worker) {
  return o.locks <= 1 ? o.lock : o.lock + "-" + std::to_string(worker % o.locks);
}

}  // namespace verify
