// A semaphore's or latch's call run by the wait driver, and the entry points that start one.
#include <array>

#include "base/deadline.hpp"
#include "base/keys.hpp"
#include "base/random.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "semaphore/counter_spec.hpp"

namespace deadbolt::detail {
namespace {

constexpr wait_step call_step(const counter_spec& s) { return {step_role::attempt, 0, s.idempotent}; }
constexpr wait_step verify_step(const counter_spec& s) { return {step_role::check, 1, s.idempotent}; }
constexpr wait_step undo_step(const counter_spec& s) { return {step_role::undo, 2, s.idempotent}; }

const counter_spec* spec_for(counter_call call) {
  if (const counter_spec* s = semaphore_spec(call)) return s;
  if (const counter_spec* s = expirable_spec(call)) return s;
  return latch_spec(call);
}

bool refuse(op_context& core, completion* done, basic_completion<std::optional<permit_id>>* done_id,
            std::error_code ec) {
  if (!ec) ec = core.refusal();
  if (!ec) return false;
  if (done != nullptr) {
    core.complete_later(*done, ec);
  } else {
    asio::post(core.io_executor(), [self = core.lifeline(), done_id, ec] { done_id->complete(ec, std::nullopt); });
  }
  return true;
}

}  // namespace

void counter_attempt::start(const std::shared_ptr<const counter_names>& n, const counter_spec& spec, const counter_args& a,
                         completion* done, basic_completion<std::optional<permit_id>>* done_id) {
  undo_ = false;
  report_ = {};
  names = n;
  req.route_key = n->name;
  args = a;
  spec_ = &spec;
  done_ = done;
  done_id_ = done_id;
  wait_setup s;
  s.rules.verifiable = spec.verify != nullptr;
  s.rules.recheck_caps_park = true;  // the keys have no TTL to bound a wait
  s.rules.first = call_step(spec);
  if (spec.verify != nullptr) s.rules.verify = verify_step(*spec.verify);
  if (spec.undo != nullptr) {
    // An acquire: what it takes is synced to a replica, or given back and tried again.
    s.rules.undo = undo_step(*spec.undo);
    s.rules.syncs_replicas = true;
  }
  s.wait_ms = a.wait_ms;
  s.channel = n->channel;
  s.wake = spec.policy;
  op_.begin(*this, s);
}

void counter_attempt::start_undo(const std::shared_ptr<const counter_names>& n, const counter_spec& undo, const counter_args& a,
                              completion* done, basic_completion<std::optional<permit_id>>* done_id,
                              std::error_code report) {
  start(n, undo, a, done, done_id);
  undo_ = true;
  report_ = report;
}

void counter_attempt::sending(const wait_step& s) {
  current_ = s.role == step_role::check ? spec_->verify : s.role == step_role::undo ? spec_->undo : spec_;
  reply_.reset();
  now_ms = port::wall_clock_ms();
  if (s.role == step_role::undo) {
    // The wait driver gives back what no replica acknowledged (a permit a verify found too: a read
    // cannot be confirmed by WAIT).
    core.observe.log(log_level::warning, "no replica acknowledged the acquire on ", names->name,
                     " (config::replica_sync): given back, to be tried again");
  }
}

wait_outcome counter_attempt::read(const wait_step&) {
  switch (reply_.what) {
    case scalar_reply::kind::error: return wait_outcome::failed(reply_.error);
    case scalar_reply::kind::nil:
    case scalar_reply::kind::integer: break;
    default: return wait_outcome::failed(errc::protocol_error);
  }
  return current_->judge({reply_, args, now_ms});
}

void counter_attempt::conclude(const wait_action& end, std::error_code ec, wait_op_base& op) {
  completion* done = done_;
  basic_completion<std::optional<permit_id>>* done_id = done_id_;
  const permit_id id = args.id;
  std::int64_t value = end.value;
  done_ = nullptr;
  done_id_ = nullptr;
  if (undo_) {
    ec = report_;
    value = 0;
  } else if (end.give_back && spec_->undo != nullptr) {
    // Taken, but nobody wants it any more: give it back (shutdown sends it before it closes). The
    // caller hears of the cancel once it is given back: by then the object is as it was.
    wait_op<counter_attempt>* undo = core.pools().of<wait_op<counter_attempt>>().take(core);
    undo->attempt.start_undo(names, *spec_->undo, args, done, done_id, ec);
    names.reset();
    op.recycle();
    return;
  }
  names.reset();
  op.recycle();
  if (done != nullptr) done->complete(ec, value);
  if (done_id != nullptr) done_id->complete(ec, !ec && value != 0 ? std::optional<permit_id>(id) : std::nullopt);
}

// ---- entry points ------------------------------------------------------------------------------------

std::shared_ptr<const counter_names> make_counter_names(std::string_view name, counter_kind kind) {
  auto names = std::make_shared<counter_names>();
  names->kind = kind;
  names->name = std::string(name);
  if (kind == counter_kind::latch) {
    // Built the old way: braces always added (docs/protocol.md §10).
    names->channel = "redisson_countdownlatch__channel__{" + names->name + "}";
  } else {
    names->channel = prefix_name("redisson_sc", name);
    names->timeouts = suffix_name(name, "timeout");
  }
  return names;
}

op_ref start_counter_call(client_core& engine, const std::shared_ptr<const counter_names>& names, counter_call call,
                  const counter_args& args, completion& done) {
  op_context& core = context_of(engine);
  const counter_spec* spec = spec_for(call);
  const bool bad = spec == nullptr || !valid_lease_ms(args.lease_ms);
  if (refuse(core, &done, nullptr, bad ? make_error_code(errc::invalid_argument) : std::error_code())) {
    return {};
  }
  wait_outcome answer;
  if (spec->shortcut != nullptr && spec->shortcut(args, answer)) {
    core.complete_later(done, answer.what == wait_outcome::kind::failed ? answer.ec : std::error_code(), answer.value);
    return {};
  }
  return core.pools().of<wait_op<counter_attempt>>().take(core)->start(names, *spec, args, &done, nullptr);
}

op_ref start_permit_acquire(client_core& engine, const std::shared_ptr<const counter_names>& names,
                            const counter_args& args, basic_completion<std::optional<permit_id>>& done) {
  op_context& core = context_of(engine);
  const counter_spec* spec = expirable_spec(counter_call::permit_acquire);
  wait_outcome answer;
  std::error_code ec;
  if (spec->shortcut != nullptr && spec->shortcut(args, answer)) ec = answer.ec;
  if (!valid_lease_ms(args.lease_ms)) ec = errc::invalid_argument;
  if (refuse(core, nullptr, &done, ec)) return {};
  counter_args a = args;
  // Permit ids need only be unique: the thread's generator (seeded from the platform's random bytes).
  std::array<unsigned char, 16> bytes{};
  for (std::size_t half = 0; half < 2; ++half) {
    const std::uint64_t z = thread_random();
    for (std::size_t i = 0; i < 8; ++i) bytes[half * 8 + i] = static_cast<unsigned char>(z >> (i * 8));
  }
  a.id = permit_id(bytes);
  return core.pools().of<wait_op<counter_attempt>>().take(core)->start(names, *spec, a, nullptr, &done);
}

wait_outcome value_or_zero(const counter_reading& r) {
  return wait_outcome::done(r.reply.what == scalar_reply::kind::integer ? r.reply.value : 0);
}

}  // namespace deadbolt::detail
