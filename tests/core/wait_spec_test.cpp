// Each kind's wait spec without a server: what an acquire reply (or a semaphore's or latch's reply)
// means as a wait outcome, and how each kind waits (park or spin, bounds, wake policy, a trace to
// leave, verify and undo steps).
#include <doctest/doctest.h>

#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <system_error>
#include <vector>

#include "deadbolt/error.hpp"
#include "deadbolt/resp/node.hpp"
#include "lock/acquire_reply.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "semaphore/sync_spec.hpp"

namespace detail = deadbolt::detail;
namespace resp = deadbolt::resp;
using deadbolt::errc;
using detail::lock_kind;
using detail::wait_outcome;
using outcome_kind = wait_outcome::kind;

namespace {

resp::node integer(std::string_view v, std::size_t depth = 0) { return {resp::type::integer, depth, 1, v}; }
resp::node array(std::size_t n) { return {resp::type::array, 0, n, {}}; }
resp::node null_node() { return {resp::type::null, 0, 1, {}}; }
resp::node error(std::string_view text) { return {resp::type::simple_error, 0, 1, text}; }

// The attempt reply `nodes` read by `kind`'s protocol.
wait_outcome attempt(lock_kind kind, std::initializer_list<resp::node> nodes, detail::backoff_state* b = nullptr) {
  const detail::lock_protocol& p = detail::protocol_of(kind);
  const auto names = detail::make_lock_names("spec-lock", kind);
  detail::backoff_state local;
  detail::acquire_reply r;
  r.reset(p.hands_out_tokens());
  for (const resp::node& n : nodes) r.take(n);
  return r.outcome(p, *names, b ? *b : local);
}

wait_outcome ttl(lock_kind kind, std::string_view ms) { return attempt(kind, {integer(ms)}); }

void check_busy(const wait_outcome& o, std::int64_t wait_ms) {
  REQUIRE(o.what == outcome_kind::busy);
  CHECK(o.wait_ms == wait_ms);
}

void check_failed(const wait_outcome& o, std::error_code ec) {
  REQUIRE(o.what == outcome_kind::failed);
  CHECK(o.ec == ec);
}

}  // namespace

TEST_CASE("lock specs: an acquire reply of {count} is acquired; the fenced lock's {count, token} gives the token") {
  for (lock_kind k : {lock_kind::reentrant, lock_kind::spin, lock_kind::fair, lock_kind::read, lock_kind::write}) {
    const wait_outcome o = attempt(k, {array(1), integer("3", 1)});
    REQUIRE(o.what == outcome_kind::acquired);
    CHECK(o.value == 1);
    check_failed(attempt(k, {array(2), integer("1", 1), integer("9", 1)}), errc::protocol_error);
  }
  const detail::lock_protocol& fenced = detail::protocol_of(lock_kind::fenced);
  detail::acquire_reply r;
  r.reset(fenced.hands_out_tokens());
  r.take(array(2));
  r.take(integer("2", 1));
  r.take(integer("77", 1));
  detail::backoff_state b;
  const wait_outcome o = r.outcome(fenced, *detail::make_lock_names("f", lock_kind::fenced), b);
  REQUIRE(o.what == outcome_kind::acquired);
  CHECK(o.value == 77);
  CHECK(r.count() == 2);
  check_failed(attempt(lock_kind::fenced, {array(1), integer("1", 1)}), errc::protocol_error);
}

TEST_CASE("lock specs: only positive counts are an acquisition; nil and other shapes are protocol errors") {
  check_failed(attempt(lock_kind::reentrant, {array(1), integer("0", 1)}), errc::protocol_error);
  check_failed(attempt(lock_kind::fenced, {array(2), integer("1", 1), integer("-4", 1)}), errc::protocol_error);
  check_failed(attempt(lock_kind::reentrant, {null_node()}), errc::protocol_error);  // Redisson's answer, never ours
  check_failed(attempt(lock_kind::reentrant, {{resp::type::blob_string, 0, 1, "OK"}}), errc::protocol_error);
  const wait_outcome e = attempt(lock_kind::reentrant, {error("LOADING Redis is loading the dataset in memory")});
  check_failed(e, errc::server_busy);
}

TEST_CASE("lock specs: a busy reply waits for the holder's TTL; gone or expired tries again at once") {
  for (lock_kind k : {lock_kind::reentrant, lock_kind::fenced, lock_kind::read, lock_kind::write}) {
    check_busy(ttl(k, "1500"), 1500);
    check_busy(ttl(k, "-1"), -1);  // no TTL: the recheck interval
    check_busy(ttl(k, "0"), 0);
    check_busy(ttl(k, "-2"), 0);
    const detail::wait_rules r = detail::protocol_of(k).rules();
    CHECK(r.parks);
    CHECK(r.verifiable);
    CHECK_FALSE(r.leaves_trace);
    CHECK(r.recheck_ms == 5'000);
    CHECK_FALSE(r.recheck_caps_park);  // the TTL alone bounds a park
  }
}

TEST_CASE("lock specs: the fair lock caps a park, re-checks soon when someone is ahead, and leaves its queue") {
  check_busy(ttl(lock_kind::fair, "1500"), 1500);
  check_busy(ttl(lock_kind::fair, "-1"), -1);
  check_busy(ttl(lock_kind::fair, "0"), 50);   // free, but someone is ahead of us
  check_busy(ttl(lock_kind::fair, "-2"), 50);
  const detail::wait_rules r = detail::protocol_of(lock_kind::fair).rules();
  CHECK(r.leaves_trace);
  CHECK(r.recheck_caps_park);
  CHECK(r.recheck_ms == 5'000);
  CHECK(r.leave == detail::lock_steps::give_up);
}

TEST_CASE("lock specs: the spin lock sleeps its backoff sequence instead of parking") {
  const detail::wait_rules r = detail::protocol_of(lock_kind::spin).rules();
  CHECK_FALSE(r.parks);
  detail::backoff_state b;
  check_busy(attempt(lock_kind::spin, {integer("1500")}, &b), 1);  // the default sequence starts at 1 ms
  const wait_outcome second = attempt(lock_kind::spin, {integer("1500")}, &b);
  REQUIRE(second.what == outcome_kind::busy);
  CHECK(second.wait_ms >= 2);
  CHECK(second.wait_ms <= 3);
  CHECK(b.failures == 2);
  check_busy(attempt(lock_kind::spin, {integer("-2")}, &b), 0);  // gone: at once, no backoff used
  CHECK(b.failures == 2);
}

TEST_CASE("lock specs: who queues behind local waiters, who hands out tokens, how a message wakes") {
  CHECK(detail::protocol_of(lock_kind::reentrant).queues_behind_local_waiters());
  CHECK(detail::protocol_of(lock_kind::fenced).queues_behind_local_waiters());
  for (lock_kind k : {lock_kind::spin, lock_kind::fair, lock_kind::read, lock_kind::write}) {
    CHECK_FALSE(detail::protocol_of(k).queues_behind_local_waiters());
  }
  CHECK(detail::protocol_of(lock_kind::fenced).hands_out_tokens());
  CHECK_FALSE(detail::protocol_of(lock_kind::reentrant).hands_out_tokens());
  CHECK(detail::protocol_of(lock_kind::read).wake() == detail::wake_policy::by_payload);
  CHECK(detail::protocol_of(lock_kind::write).wake() == detail::wake_policy::by_payload);
  CHECK(detail::protocol_of(lock_kind::reentrant).wake() == detail::wake_policy::one);
}

// ---- semaphores and the latch --------------------------------------------------------------------------

namespace {

detail::scalar_reply reply_of(std::int64_t v) {
  detail::scalar_reply r;
  r.what = detail::scalar_reply::kind::integer;
  r.value = v;
  return r;
}

detail::scalar_reply reply_nil() {
  detail::scalar_reply r;
  r.what = detail::scalar_reply::kind::nil;
  return r;
}

wait_outcome judge(const detail::sync_spec* s, const detail::scalar_reply& r, std::int64_t now_ms = 0) {
  REQUIRE(s != nullptr);
  const detail::sync_args args;
  return s->judge({r, args, now_ms});
}

}  // namespace

TEST_CASE("sync specs: a semaphore acquire takes its permits or waits for a release; a cancelled one gives them back") {
  const detail::sync_spec* acquire = detail::semaphore_spec(detail::sync_call::sem_acquire);
  REQUIRE(acquire != nullptr);
  const wait_outcome taken = judge(acquire, reply_of(1));
  REQUIRE(taken.what == outcome_kind::acquired);
  CHECK(taken.value == 1);
  check_busy(judge(acquire, reply_of(0)), -1);  // no bound: the recheck interval
  CHECK(acquire->undo == detail::semaphore_spec(detail::sync_call::sem_release));
  CHECK(acquire->verify == nullptr);  // permits have no owner: a lost reply stays unknown
  CHECK_FALSE(acquire->idempotent);
  CHECK(acquire->policy == detail::wake_policy::count);
  wait_outcome shortcut;
  detail::sync_args zero;
  REQUIRE(acquire->shortcut(zero, shortcut));  // zero permits: answered without a request
  CHECK(shortcut.what == outcome_kind::done);
  CHECK(shortcut.value == 1);
  detail::sync_args negative;
  negative.n = -1;
  REQUIRE(acquire->shortcut(negative, shortcut));
  check_failed(shortcut, errc::invalid_argument);
}

TEST_CASE("sync specs: a permit acquire waits until the earliest expiry, and verifies a lost reply by its id") {
  const detail::sync_spec* acquire = detail::expirable_spec(detail::sync_call::permit_acquire);
  REQUIRE(acquire != nullptr);
  CHECK(judge(acquire, reply_of(-1)).what == outcome_kind::acquired);
  check_busy(judge(acquire, reply_nil()), -1);
  check_busy(judge(acquire, reply_of(1'400), 1'000), 401);  // just after the earliest expiry
  check_busy(judge(acquire, reply_of(900), 1'000), 1);      // already past: at least 1 ms
  REQUIRE(acquire->verify != nullptr);
  CHECK(acquire->verify->idempotent);
  CHECK(judge(acquire->verify, reply_nil()).what == outcome_kind::retry);  // not held: it did not run
  CHECK(judge(acquire->verify, reply_of(0)).what == outcome_kind::acquired);
  CHECK(acquire->undo == detail::expirable_spec(detail::sync_call::permit_try_release));
  check_failed(judge(detail::expirable_spec(detail::sync_call::permit_release), reply_of(0)), errc::no_such_permit);
}

TEST_CASE("sync specs: a latch await reads the count until it is zero; every message wakes every awaiter") {
  const detail::sync_spec* await = detail::latch_spec(detail::sync_call::latch_await);
  REQUIRE(await != nullptr);
  check_busy(judge(await, reply_of(3)), -1);
  const wait_outcome zero = judge(await, reply_nil());  // deleted at zero
  REQUIRE(zero.what == outcome_kind::done);
  CHECK(zero.value == 1);
  CHECK(await->idempotent);  // a read: sent again after a lost reply
  CHECK(await->policy == detail::wake_policy::all);
  CHECK(await->undo == nullptr);
}
