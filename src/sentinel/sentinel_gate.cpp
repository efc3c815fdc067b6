#include "sentinel/sentinel_gate.hpp"

#include <chrono>
#include <utility>

#include "base/random.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "pipeline/replica_sync.hpp"

namespace deadbolt::detail {
namespace {

std::string describe(const server_address& a) { return a.host + ":" + std::to_string(a.port); }

}  // namespace

// ROLE on the command connection: is the server the sentinels still name a master now?
class sentinel_gate::role_check final : public request {
 public:
  bool in_flight = false;  // in the connection's queue (unsent ones stay there across a reconnect)

  explicit role_check(sentinel_gate& owner) : owner_(owner) {}
  void prepare() {
    role_.reset();
    in_flight = true;
  }
  void encode(resp::encoder& e) override { e.command("ROLE"); }
  void on_node(const resp::node& n) override { role_.take(n); }
  void on_done(std::error_code ec) override {
    in_flight = false;
    owner_.role_answered(ec, !role_.error() && role_.master());
  }

 private:
  sentinel_gate& owner_;
  role_reader role_;
};

sentinel_gate::sentinel_gate(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                             std::shared_ptr<sentinel_preference> preference, sentinel_view& view, listener& owner)
    : executor_(ex),
      ep_(ep),
      cfg_(cfg),
      preference_(std::move(preference)),
      view_(view),
      owner_(owner),
      observe_(cfg),
      role_check_(std::make_unique<role_check>(*this)),
      hold_timer_(ex),
      retry_timer_(ex),
      backoff_(cfg.reconnect_min.count(), cfg.reconnect_max.count(), random_seed()) {}

sentinel_gate::~sentinel_gate() {
  stop();
  *alive_ = false;
}

void sentinel_gate::stop() {
  if (stopped_) return;
  stopped_ = true;
  if (asker_) asker_->stop();
  retry_timer_.cancel();
  hold_timer_.cancel();
  request_queue failing;
  failing.splice_back(held_);
  while (request* r = failing.pop_front()) r->on_done(errc::shutting_down);
}

bool sentinel_gate::admit(request& r) {
  if (stopped_ || !r.acquires || !commands_) return true;
  const std::int64_t now = port::monotonic_ns();
  // A connection that is not ready asks the sentinels and confirms ROLE before it writes anything.
  if (held_.empty() && (view_.fresh(now) || !commands_->ready())) return true;
  hold(r, now);
  if (phase_ == phase::idle) ask();
  return false;
}

void sentinel_gate::hold(request& r, std::int64_t now_ns) {
  const bool first = held_.empty();
  r.pipe_.deadline_ns = now_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(cfg_.command_timeout).count();
  held_.push_back(r);
  if (first) arm_hold_timer();
}

void sentinel_gate::check_due() {
  if (!stopped_ && phase_ == phase::idle && view_.ask_due()) ask();
}

void sentinel_gate::ask() {
  if (stopped_) return;
  if (!commands_ || !commands_->ready()) {
    phase_ = phase::awaiting_ready;  // its login asks and confirms
    return;
  }
  phase_ = phase::asking;
  asked_ns_ = port::monotonic_ns();
  if (!asker_) asker_ = std::make_unique<sentinel_addresses>(executor_, ep_, cfg_, preference_);
  asker_->next(*this);
}

void sentinel_gate::on_address(std::error_code ec, const server_address& where) {
  if (stopped_ || phase_ != phase::asking) return;
  if (ec) {
    last_error_ = ec;
    after_failed_round();
    return;
  }
  backoff_.reset();
  last_error_ = {};
  if (!commands_->ready()) {
    phase_ = phase::awaiting_ready;
    return;
  }
  if (where != commands_->server()) {
    // A switch this client did not hear of: its watch was silent or away when it was announced.
    phase_ = phase::awaiting_ready;
    observe_.log(log_level::warning, "sentinel: the sentinels name ", describe(where), " as master '",
                 ep_.sentinel_master, "', not ", describe(commands_->server()), ": moving the connections");
    owner_.on_master_moved(&where);
    return;
  }
  check_role();
}

void sentinel_gate::check_role() {
  phase_ = phase::checking_role;
  if (role_check_->in_flight) {
    recheck_ = true;  // one sent before this round began is no answer to it: ask again after it
    return;
  }
  role_check_->prepare();
  commands_->submit(*role_check_);
}

void sentinel_gate::role_answered(std::error_code ec, bool master) {
  const bool again = std::exchange(recheck_, false);
  if (stopped_ || phase_ != phase::checking_role) return;
  if (again) {
    check_role();
    return;
  }
  if (!ec && master) {
    view_.confirmed(asked_ns_);
    phase_ = phase::idle;
    release();
    check_due();
    return;
  }
  // Not a master although the sentinels named it (they are behind a failover): the connections ask
  // them again. Unanswered: the connection dropped, and its next login asks and confirms.
  phase_ = phase::awaiting_ready;
  if (!ec) owner_.on_master_moved(nullptr);
}

void sentinel_gate::commands_ready() {
  if (stopped_) return;
  // The login's ROLE confirmed the server the sentinels named (or announced) after this time.
  view_.confirmed(commands_->address_asked_ns());
  if (phase_ != phase::asking) phase_ = phase::idle;  // a round in flight still checks its answer
  release();
  check_due();
}

void sentinel_gate::release() {
  hold_timer_armed_ = false;
  hold_timer_.cancel();
  request_queue going;
  going.splice_back(held_);
  while (request* r = going.pop_front()) commands_->submit(*r);
}

void sentinel_gate::after_failed_round() {
  if (held_.empty() && !view_.ask_due()) {
    phase_ = phase::idle;
    return;
  }
  phase_ = phase::backing_off;
  retry_timer_.expires_after(std::chrono::milliseconds(backoff_.next_delay_ms()));
  retry_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](std::error_code ec) {
    if (ec || alive.expired() || stopped_ || phase_ != phase::backing_off) return;
    phase_ = phase::idle;
    if (!held_.empty() || view_.ask_due()) ask();
  });
}

void sentinel_gate::arm_hold_timer() {
  if (held_.empty()) return;
  hold_timer_armed_ = true;
  hold_timer_.expires_after(
      std::chrono::nanoseconds(std::max<std::int64_t>(0, held_.front()->pipe_.deadline_ns - port::monotonic_ns())));
  hold_timer_.async_wait([this, alive = std::weak_ptr<bool>(alive_)](std::error_code ec) {
    if (ec || alive.expired() || stopped_ || !hold_timer_armed_) return;
    expire_held();
  });
}

void sentinel_gate::expire_held() {
  // Held in order of arrival, each for the same time: the expired ones are at the front.
  const std::int64_t now = port::monotonic_ns();
  request_queue expired;
  while (!held_.empty() && held_.front()->pipe_.deadline_ns <= now) expired.push_back(*held_.pop_front());
  if (!held_.empty()) arm_hold_timer();
  else hold_timer_armed_ = false;
  // Never sent: what the sentinels said, or nothing yet (a wait rides that out).
  const std::error_code why = last_error_ ? last_error_ : make_error_code(errc::not_connected);
  while (request* r = expired.pop_front()) r->on_done(why);
  // Waiting for a reconnect that has not come although the connection is ready: ask again rather
  // than hold the next acquires for nothing.
  if (!stopped_ && phase_ == phase::awaiting_ready && commands_ && commands_->ready()) {
    phase_ = phase::idle;
    if (!held_.empty()) ask();
  }
}

}  // namespace deadbolt::detail
