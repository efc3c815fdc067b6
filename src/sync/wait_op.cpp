#include "sync/wait_op.hpp"

#include <algorithm>
#include <chrono>

#include "deadbolt/error.hpp"
#include "deadbolt/port/hooks.hpp"
#include "detail/deadline.hpp"
#include "detail/keys.hpp"
#include "detail/outcome.hpp"

namespace deadbolt::detail {
namespace {

const sync_spec* spec_for(sync_call call) {
  if (const sync_spec* s = semaphore_spec(call)) return s;
  if (const sync_spec* s = expirable_spec(call)) return s;
  return latch_spec(call);
}

bool refuse(client_core& core, completion* done, basic_completion<std::optional<permit_id>>* done_id,
            std::error_code ec) {
  if (!ec) {
    if (core.config_error) ec = core.config_error;
    else if (core.stopped) ec = errc::shutting_down;
  }
  if (!ec) return false;
  if (done != nullptr) {
    core.complete_later(*done, ec);
  } else {
    asio::post(core.executor, [self = core.shared_from_this(), done_id, ec] { done_id->complete(ec, std::nullopt); });
  }
  return true;
}

}  // namespace

void sync_op::start(const std::shared_ptr<const sync_names>& n, const sync_spec& spec, const sync_args& a,
                    completion* done, basic_completion<std::optional<permit_id>>* done_id) {
  names = n;
  route_key = n->name;
  args = a;
  spec_ = &spec;
  done_ = done;
  done_id_ = done_id;
  cancelled_ = false;
  waited_ = false;
  deadline_ns_ = deadline_after_ms(a.wait_ms);
  send(spec, phase::call);
}

void sync_op::cancel() {
  if (phase_ == phase::parked) {
    core.subscriptions(names->channel).cancel(*this);
  } else if (phase_ == phase::paused) {
    cancelled_ = true;
    timer_.cancel();
  } else {
    cancelled_ = true;  // acted on when the reply comes
  }
}

void sync_op::send(const sync_spec& spec, phase p) {
  current_ = &spec;
  phase_ = p;
  runs_script = spec.script;
  send_script_body = false;
  reply.reset();
  now_ms = port::wall_clock_ms();
  if (p == phase::call) {
    subscriber* subs = core.existing_subscriptions(names->channel);
    seen_messages_ = subs ? subs->messages_on(names->channel) : 0;
  }
  core.submit(*this);
}

bool sync_op::before_deadline() const { return deadline_ns_ < 0 || port::monotonic_ns() < deadline_ns_; }

void sync_op::on_done(std::error_code ec) {
  if (ec) {
    const bool waits = args.wait_ms != 0 && !cancelled_;
    if (ambiguous(ec) && !current_->idempotent) {
      // It may have run: ask if we can, never run it again (docs/protocol.md §14).
      if (current_->verify != nullptr) return send(*current_->verify, phase::verify);
      return finish(errc::outcome_unknown, 0);
    }
    if (transient(ec) && (waited_ || current_->idempotent) && waits && before_deadline()) {
      return send(*current_, phase_);  // a read, or never sent: ask again (it waits for the connection)
    }
    return finish(phase_ == phase::verify && transient(ec) ? make_error_code(errc::outcome_unknown) : ec, 0);
  }
  if (reply.what == scalar_reply::kind::error) {
    // Refused before it ran (LOADING, BUSY): a wait asks again within its deadline; a check of a call
    // that may have run asks again regardless.
    if (reply.error == errc::server_busy &&
        (phase_ == phase::verify || (args.wait_ms != 0 && !cancelled_ && before_deadline()))) {
      return retry_later();
    }
    return finish(reply.error, 0);
  }
  if (reply.what == scalar_reply::kind::unexpected || reply.what == scalar_reply::kind::none) {
    return finish(errc::protocol_error, 0);
  }
  judged(current_->judge(*this));
}

void sync_op::judged(const verdict& v) {
  switch (v.what) {
    case verdict::kind::fail: return finish(v.ec, 0);
    case verdict::kind::retry: return send(*spec_, phase::call);
    case verdict::kind::done:
      if ((cancelled_ || core.stopped) && spec_->undo != nullptr && v.value != 0) {
        // Taken, but nobody wants it any more: give it back (shutdown sends it before it closes).
        core.pools.of<sync_op>().take(core)->start(names, *spec_->undo, args, nullptr, nullptr);
        return finish(core.stopped ? make_error_code(errc::shutting_down) : make_error_code(asio::error::operation_aborted), 0);
      }
      return finish({}, v.value);
    case verdict::kind::busy:
      if (cancelled_) return finish(asio::error::operation_aborted, 0);
      if (core.stopped) return finish(errc::shutting_down, 0);
      if (args.wait_ms == 0 || !before_deadline()) return finish({}, 0);
      return park(v.wait_ms);
  }
}

void sync_op::park(std::int64_t wait_ms) {
  std::int64_t wait_ns = (wait_ms < 0 ? recheck_ms : std::min(wait_ms, recheck_ms)) * ms_to_ns;
  if (deadline_ns_ >= 0) wait_ns = std::min(wait_ns, deadline_ns_ - port::monotonic_ns());
  phase_ = phase::parked;
  waited_ = true;
  if (auto ec = core.subscriptions(names->channel).wait(*this, names->channel, spec_->policy,
                                                        std::chrono::nanoseconds(std::max<std::int64_t>(wait_ns, 0)),
                                                        seen_messages_)) {
    finish(ec, 0);
  }
}

void sync_op::retry_later() {
  resume_spec_ = current_;
  resume_phase_ = phase_;
  phase_ = phase::paused;
  waited_ = true;
  timer_.expires_after(std::chrono::milliseconds(busy_retry_ms));
  // The core owns this op (its pool): keep the core alive until the handler has run.
  timer_.async_wait([this, self = core.shared_from_this()](std::error_code ec) {
    if (phase_ != phase::paused) return;
    if (core.stopped) return finish(errc::shutting_down, 0);
    if ((ec || cancelled_) && resume_phase_ == phase::call) return finish(asio::error::operation_aborted, 0);
    send(*resume_spec_, resume_phase_);  // judged() ends a spent wait
  });
}

void sync_op::on_wake(wake_reason why) {
  switch (why) {
    case wake_reason::shutdown: return finish(errc::shutting_down, 0);
    case wake_reason::cancelled: return finish(asio::error::operation_aborted, 0);
    default: return send(*spec_, phase::call);  // a hint: try again (judged() ends a spent wait)
  }
}

void sync_op::finish(std::error_code ec, std::int64_t value) {
  if (contending) {
    if (subscriber* subs = core.existing_subscriptions(names->channel)) subs->withdraw(*this);
  }
  completion* done = done_;
  basic_completion<std::optional<permit_id>>* done_id = done_id_;
  const permit_id id = args.id;
  done_ = nullptr;
  done_id_ = nullptr;
  phase_ = phase::idle;
  ++generation;
  names.reset();
  core.pools.of<sync_op>().give_back(this);
  if (done != nullptr) done->complete(ec, value);
  if (done_id != nullptr) done_id->complete(ec, !ec && value != 0 ? std::optional<permit_id>(id) : std::nullopt);
}

// ---- entry points ------------------------------------------------------------------------------------

std::shared_ptr<const sync_names> make_sync_names(std::string_view name, sync_kind kind) {
  auto names = std::make_shared<sync_names>();
  names->kind = kind;
  names->name = std::string(name);
  if (kind == sync_kind::latch) {
    // Built the old way: braces always added (docs/protocol.md §10).
    names->channel = "redisson_countdownlatch__channel__{" + names->name + "}";
  } else {
    names->channel = prefix_name("redisson_sc", name);
    names->timeouts = suffix_name(name, "timeout");
  }
  return names;
}

op_ref start_sync(client_core& core, const std::shared_ptr<const sync_names>& names, sync_call call,
                  const sync_args& args, completion& done) {
  const sync_spec* spec = spec_for(call);
  const bool bad = spec == nullptr || !valid_lease_ms(args.lease_ms);
  if (refuse(core, &done, nullptr, bad ? make_error_code(errc::invalid_argument) : std::error_code())) {
    return {};
  }
  verdict v;
  if (spec->shortcut != nullptr && spec->shortcut(args, v)) {
    core.complete_later(done, v.what == verdict::kind::fail ? v.ec : std::error_code(), v.value);
    return {};
  }
  sync_op* op = core.pools.of<sync_op>().take(core);
  const op_ref ref = op->ref();
  op->start(names, *spec, args, &done, nullptr);
  return ref;
}

op_ref start_permit_acquire(client_core& core, const std::shared_ptr<const sync_names>& names,
                            const sync_args& args, basic_completion<std::optional<permit_id>>& done) {
  const sync_spec* spec = expirable_spec(sync_call::permit_acquire);
  verdict v;
  std::error_code ec;
  if (spec->shortcut != nullptr && spec->shortcut(args, v)) ec = v.ec;
  if (!valid_lease_ms(args.lease_ms)) ec = errc::invalid_argument;
  if (refuse(core, nullptr, &done, ec)) return {};
  sync_args a = args;
  std::array<unsigned char, 16> bytes{};
  if (!port::random_bytes(bytes.data(), bytes.size())) {
    // Ids need only be unique: fall back to the clock mixed with this op's address.
    std::uint64_t z = static_cast<std::uint64_t>(port::monotonic_ns()) ^ reinterpret_cast<std::uintptr_t>(&done);
    for (std::size_t i = 0; i < bytes.size(); ++i) {
      z = z * 6364136223846793005ull + 1442695040888963407ull;
      bytes[i] = static_cast<unsigned char>(z >> 56);
    }
  }
  a.id = permit_id(bytes);
  sync_op* op = core.pools.of<sync_op>().take(core);
  const op_ref ref = op->ref();
  op->start(names, *spec, a, nullptr, &done);
  return ref;
}

}  // namespace deadbolt::detail

namespace deadbolt {

std::optional<permit_id> permit_id::from_hex(std::string_view hex) {
  if (hex.size() != 32) return std::nullopt;
  auto digit = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::array<unsigned char, 16> bytes{};
  for (std::size_t i = 0; i < 16; ++i) {
    const int hi = digit(hex[2 * i]), lo = digit(hex[2 * i + 1]);
    if (hi < 0 || lo < 0) return std::nullopt;
    bytes[i] = static_cast<unsigned char>(hi * 16 + lo);
  }
  return permit_id(bytes);
}

std::string permit_id::hex() const {
  static constexpr char digits[] = "0123456789abcdef";
  std::string out(32, '0');
  for (std::size_t i = 0; i < 16; ++i) {
    out[2 * i] = digits[bytes_[i] >> 4];
    out[2 * i + 1] = digits[bytes_[i] & 0xf];
  }
  return out;
}

}  // namespace deadbolt
