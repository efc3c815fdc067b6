#include "sentinel/sentinel_resolution.hpp"

#include <algorithm>

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

namespace {

using step = sentinel_resolution::action::kind;

sentinel_resolution::action just(step what) {
  sentinel_resolution::action a;
  a.what = what;
  return a;
}

}  // namespace

std::chrono::milliseconds sentinel_answer_bound(const config& cfg) {
  const std::chrono::milliseconds deadline = std::min(cfg.connect_timeout, cfg.command_timeout);
  return std::max(deadline / 4, std::chrono::milliseconds(1));
}

sentinel_resolution::sentinel_resolution(std::size_t sentinels, sentinel_preference& preference,
                                         const master_switch* announced)
    : count_(sentinels),
      preference_(preference),
      announced_(announced),
      switches_seen_(announced ? announced->count : 0) {}

void sentinel_resolution::stop() noexcept {
  stopped_ = true;
  waiting_ = false;
  asking_ = false;  // what the stopped connection still reports is no answer
}

sentinel_resolution::action sentinel_resolution::start_round() {
  if (stopped_) return just(step::none);
  if (announced_ && announced_->count != switches_seen_) {
    switches_seen_ = announced_->count;
    waiting_ = false;   // answered here: a round still open is over
    replicas_.clear();  // not asked: the announced master's replicas are not known here
    action a = just(step::answer);
    a.address = announced_->to;  // ROLE still confirms it
    return a;
  }
  if (count_ == 0) {
    waiting_ = false;
    action a = just(step::fail);
    a.error = make_error_code(errc::invalid_config);
    return a;
  }
  waiting_ = true;
  asked_ = 0;
  unknown_ = false;
  last_error_ = {};
  if (asking_) return just(step::none);  // the question out answers this round
  return ask();
}

sentinel_resolution::action sentinel_resolution::ask() {
  // Each question starts at the sentinel the client prefers now: another source may have learned
  // since this round began that it is silent.
  sentinel_ = preference_.first % count_;
  asking_ = true;
  replicas_.clear();
  action a = just(step::ask);
  a.sentinel = sentinel_;
  return a;
}

sentinel_resolution::action sentinel_resolution::answered(const server_address& master,
                                                          const std::vector<server_address>& replicas) {
  if (!asking_) return just(step::none);  // a stopped connection's late news
  asking_ = false;
  preference_.first = sentinel_;
  replicas_ = replicas;
  if (!waiting_) return just(step::none);
  waiting_ = false;
  action a = just(step::answer);
  a.address = master;
  return a;
}

sentinel_resolution::action sentinel_resolution::failed(std::error_code why) {
  if (!asking_) return just(step::none);
  asking_ = false;
  replicas_.clear();
  if (why == errc::unknown_master) unknown_ = true;
  last_error_ = why;
  // This one could not say: the next sentinel, for every source of the client (unless another one
  // already moved on).
  if (preference_.first % count_ == sentinel_) preference_.first = (sentinel_ + 1) % count_;
  if (++asked_ < count_ && waiting_) return just(step::ask_soon);
  // Nobody named the master in this round. The connection backs off and asks again.
  if (!waiting_) return just(step::none);
  waiting_ = false;
  action a = just(step::fail);
  a.error = unknown_ ? make_error_code(errc::unknown_master) : last_error_;
  return a;
}

sentinel_resolution::action sentinel_resolution::resume() {
  if (stopped_ || !waiting_ || asking_) return just(step::none);
  return ask();
}

}  // namespace deadbolt::detail
