#include "deadbolt/blocking.hpp"

#include <condition_variable>
#include <mutex>
#include <string>
#include <utility>

#include "deadbolt/port/hooks.hpp"
#include "detail/client_core.hpp"
#if defined(__cpp_exceptions)
#include <system_error>
#endif

namespace deadbolt {
namespace {

// A completion the calling thread waits on; it lives on that thread's stack.
template <typename Value = std::int64_t>
class sync_completion final : public detail::basic_completion<Value> {
 public:
  void complete(std::error_code ec, Value value) override {
    std::lock_guard<std::mutex> guard(mutex_);
    ec_ = ec;
    value_ = std::move(value);
    done_ = true;
    ready_.notify_one();
  }
  Value wait(std::error_code& ec) {
    std::unique_lock<std::mutex> guard(mutex_);
    ready_.wait(guard, [this] { return done_; });
    ec = ec_;
    return value_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable ready_;
  bool done_ = false;
  std::error_code ec_;
  Value value_{};
};

/// Runs `start(core, completion&)` on the loop and waits for its end; fails at once on the loop's own
/// thread (would_deadlock) and once the blocking_client is gone (shutting_down).
template <typename Value = std::int64_t, typename Start>
Value run_blocking(const std::shared_ptr<detail::client_core>& core, const asio::any_io_executor& ex,
                   std::error_code& ec, Start start) {
  sync_completion<Value> done;
  ec = detail::through_gate(core->gate, [&] { asio::post(ex, [&core, &done, &start] { start(*core, done); }); });
  if (ec) return Value{};
  return done.wait(ec);
}

/// A timed wait of the blocking API: a non-positive one is exactly one attempt (std::timed_mutex's
/// rule). Waiting without end is only ever asked for explicitly (lock(), acquire(), await()).
std::int64_t timed_wait_ms(std::int64_t wait_ms) { return wait_ms < 0 ? 0 : wait_ms; }
constexpr std::int64_t forever = -1;

[[noreturn]] void raise(std::error_code ec, const std::string& what) {
#if defined(__cpp_exceptions)
  throw std::system_error(ec, what);
#else
  port::fatal((what + ": " + ec.message()).c_str());
#endif
}

std::int64_t calling_thread() { return static_cast<std::int64_t>(port::thread_id()); }

}  // namespace

// ---- blocking_client ------------------------------------------------------------------------------

struct blocking_client::loop {
  // Shared with the engine (client_core::keep_alive): handles that outlive the client still hold
  // executors and strands of this io_context, which must outlive them (it no longer runs).
  std::shared_ptr<asio::io_context> io = std::make_shared<asio::io_context>(1);
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(*io);
  std::shared_ptr<detail::client_core> core;
  std::thread thread;

  explicit loop(const config& cfg) : core(detail::make_client_core(io->get_executor(), cfg)) {
    core->keep_alive = io;
    thread = std::thread([this] { io->run(); });
    core->gate.loop_thread = thread.get_id();
  }
  ~loop() {
    detail::close_gate(core->gate);  // handles that outlive the client fail from now on
    asio::post(*io, [core = core] { detail::shutdown(*core); });
    work.reset();
    thread.join();
  }
};

blocking_client::blocking_client(const config& cfg) : loop_(std::make_unique<loop>(cfg)) {}
blocking_client::~blocking_client() = default;

std::error_code blocking_client::config_error() const { return detail::config_error(*loop_->core); }
const std::string& blocking_client::id() const { return detail::client_id(*loop_->core); }

std::error_code blocking_client::connect() {
  std::error_code ec;
  run_blocking(loop_->core, loop_->io->get_executor(), ec,
               [](detail::client_core& core, detail::completion& c) { detail::start_connect(core, c); });
  return ec;
}

object_info blocking_client::inspect(std::string_view name, std::error_code& ec) {
  return run_blocking<object_info>(loop_->core, loop_->io->get_executor(), ec,
                                   [name](detail::client_core& core, detail::basic_completion<object_info>& c) {
                                     detail::start_inspect(core, name, c);
                                   });
}

object_info blocking_client::inspect(std::string_view name) {
  std::error_code ec;
  object_info info = inspect(name, ec);
  if (ec) raise(ec, "deadbolt: inspect " + std::string(name));
  return info;
}

blocking_lock blocking_client::lock(std::string_view name) {
  return blocking_lock(loop_->core, loop_->io->get_executor(), name);
}

blocking_fair_lock blocking_client::fair_lock(std::string_view name) {
  return blocking_fair_lock(loop_->core, loop_->io->get_executor(), name);
}

blocking_read_write_lock blocking_client::read_write_lock(std::string_view name) {
  return blocking_read_write_lock(loop_->core, loop_->io->get_executor(), name);
}

blocking_fenced_lock blocking_client::fenced_lock(std::string_view name) {
  return blocking_fenced_lock(loop_->core, loop_->io->get_executor(), name);
}

blocking_semaphore blocking_client::semaphore(std::string_view name) {
  return blocking_semaphore(loop_->core, loop_->io->get_executor(), name, detail::sync_kind::semaphore);
}

blocking_expirable_semaphore blocking_client::expirable_semaphore(std::string_view name) {
  return blocking_expirable_semaphore(loop_->core, loop_->io->get_executor(), name, detail::sync_kind::expirable);
}

blocking_count_down_latch blocking_client::count_down_latch(std::string_view name) {
  return blocking_count_down_latch(loop_->core, loop_->io->get_executor(), name, detail::sync_kind::latch);
}

void blocking_client::on_lease_lost(lease_lost_handler handler) {
  asio::post(*loop_->io, [core = loop_->core, h = std::move(handler)]() mutable {
    detail::set_lease_lost_handler(*core, std::move(h));
  });
}

// ---- the shared base --------------------------------------------------------------------------------

namespace detail {

blocking_lock_base::blocking_lock_base(std::shared_ptr<client_core> core, asio::any_io_executor ex,
                                       std::string_view name, lock_kind kind)
    : core_(std::move(core)), executor_(std::move(ex)), names_(make_lock_names(name, kind)), kind_(kind) {}

const std::string& blocking_lock_base::name() const noexcept { return names_->name; }

std::int64_t blocking_lock_base::acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec) {
  const std::int64_t owner = calling_thread();
  return run_blocking(core_, executor_, ec, [&](client_core& core, completion& c) {
    start_acquire(core, names_, owner, wait_ms, lease_ms, c);
  });
}

std::int64_t blocking_lock_base::acquire_or_throw(std::int64_t wait_ms, std::int64_t lease_ms, const char* what) {
  std::error_code ec;
  const std::int64_t got = acquire(wait_ms, lease_ms, ec);
  if (ec) raise(ec, std::string("deadbolt: ") + what + " " + names_->name);
  return got;
}

void blocking_lock_base::unlock(std::error_code& ec) noexcept {
  const std::int64_t owner = calling_thread();
  run_blocking(core_, executor_, ec, [&](client_core& core, completion& c) {
    start_unlock(core, names_, owner, c);
  });
}

void blocking_lock_base::unlock() noexcept {
  std::error_code ignored;  // the lock is released or already gone; nothing a caller of unlock() can do
  unlock(ignored);
}

std::int64_t blocking_lock_base::query(lock_query q, std::error_code& ec) {
  const std::int64_t owner = calling_thread();
  return run_blocking(core_, executor_, ec, [&](client_core& core, completion& c) {
    start_query(core, names_, q, owner, c);
  });
}

bool blocking_lock_base::force_unlock(std::error_code& ec) { return query(lock_query::force_unlock, ec) != 0; }
bool blocking_lock_base::is_locked(std::error_code& ec) { return query(lock_query::is_locked, ec) != 0; }
std::int64_t blocking_lock_base::hold_count(std::error_code& ec) { return query(lock_query::hold_count, ec); }
bool blocking_lock_base::lease_lost() {
  std::error_code ec;
  return query(lock_query::lease_lost, ec) != 0;
}

}  // namespace detail

// ---- blocking_lock and the other kinds -----------------------------------------------------------------

template <detail::lock_kind Kind>
basic_blocking_lock<Kind>::basic_blocking_lock(std::shared_ptr<detail::client_core> core, asio::any_io_executor ex,
                                               std::string_view name)
    : blocking_lock_base(std::move(core), std::move(ex), name, Kind) {}

blocking_read_write_lock::blocking_read_write_lock(std::shared_ptr<detail::client_core> core,
                                                   asio::any_io_executor ex, std::string_view name)
    : read_(core, ex, name), write_(std::move(core), std::move(ex), name) {}

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec) {
  return acquire(timed_wait_ms(wait_ms), lease_ms, ec) != 0;
}

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_acquire_or_throw(std::int64_t wait_ms) {
  return acquire_or_throw(timed_wait_ms(wait_ms), 0, "try_lock") != 0;
}

template <detail::lock_kind Kind>
void basic_blocking_lock<Kind>::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  acquire(forever, lease.count(), ec);
}

template <detail::lock_kind Kind>
void basic_blocking_lock<Kind>::lock(std::chrono::milliseconds lease) {
  acquire_or_throw(forever, lease.count(), "lock");
}

template <detail::lock_kind Kind>
bool basic_blocking_lock<Kind>::try_lock() {
  return try_acquire_or_throw(0);
}

template class basic_blocking_lock<detail::lock_kind::reentrant>;
template class basic_blocking_lock<detail::lock_kind::fair>;
template class basic_blocking_lock<detail::lock_kind::read>;
template class basic_blocking_lock<detail::lock_kind::write>;

// ---- blocking_fenced_lock ---------------------------------------------------------------------------

namespace {
std::optional<std::uint64_t> as_token(std::int64_t v) {
  return v > 0 ? std::optional<std::uint64_t>(static_cast<std::uint64_t>(v)) : std::nullopt;
}
}  // namespace

blocking_fenced_lock::blocking_fenced_lock(std::shared_ptr<detail::client_core> core, asio::any_io_executor ex,
                                           std::string_view name)
    : blocking_lock_base(std::move(core), std::move(ex), name, detail::lock_kind::fenced) {}

std::optional<std::uint64_t> blocking_fenced_lock::try_acquire(std::int64_t wait_ms, std::int64_t lease_ms,
                                                               std::error_code& ec) {
  const std::int64_t got = acquire(timed_wait_ms(wait_ms), lease_ms, ec);
  return ec ? std::nullopt : as_token(got);
}

std::optional<std::uint64_t> blocking_fenced_lock::try_acquire_or_throw(std::int64_t wait_ms) {
  return as_token(acquire_or_throw(timed_wait_ms(wait_ms), 0, "try_lock"));
}

std::uint64_t blocking_fenced_lock::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  const std::int64_t got = acquire(forever, lease.count(), ec);
  return ec ? 0 : static_cast<std::uint64_t>(got);
}

std::uint64_t blocking_fenced_lock::lock(std::chrono::milliseconds lease) {
  return static_cast<std::uint64_t>(acquire_or_throw(forever, lease.count(), "lock"));
}

std::optional<std::uint64_t> blocking_fenced_lock::try_lock() { return try_acquire_or_throw(0); }

std::uint64_t blocking_fenced_lock::token(std::error_code& ec) {
  const std::int64_t v = query(detail::lock_query::fencing_token, ec);
  return ec || v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

// ---- semaphores and the latch -------------------------------------------------------------------------

namespace detail {

blocking_sync_base::blocking_sync_base(std::shared_ptr<client_core> core, asio::any_io_executor ex,
                                       std::string_view name, sync_kind kind)
    : core_(std::move(core)), executor_(std::move(ex)), names_(make_sync_names(name, kind)) {}

std::int64_t blocking_sync_base::call(sync_call c, const sync_args& args, std::error_code& ec) {
  return run_blocking(core_, executor_, ec, [&](client_core& core, completion& done) {
    start_sync(core, names_, c, args, done);
  });
}

std::int64_t blocking_sync_base::call_or_throw(sync_call c, const sync_args& args, const char* what) {
  std::error_code ec;
  const std::int64_t v = call(c, args, ec);
  if (ec) raise(ec, std::string("deadbolt: ") + what + " " + names_->name);
  return v;
}

}  // namespace detail

using detail::sync_call;

void blocking_semaphore::acquire(std::int64_t permits) {
  detail::sync_args a = with_count(permits);
  a.wait_ms = forever;
  call_or_throw(sync_call::sem_acquire, a, "acquire");
}
void blocking_semaphore::acquire(std::int64_t permits, std::error_code& ec) {
  detail::sync_args a = with_count(permits);
  a.wait_ms = forever;
  call(sync_call::sem_acquire, a, ec);
}
bool blocking_semaphore::try_acquire(std::int64_t permits) { return try_acquire_or_throw(permits, 0); }
bool blocking_semaphore::try_acquire(std::int64_t permits, std::chrono::milliseconds wait, std::error_code& ec) {
  detail::sync_args a = with_count(permits);
  a.wait_ms = timed_wait_ms(wait.count());
  return call(sync_call::sem_acquire, a, ec) != 0;
}
bool blocking_semaphore::try_acquire_or_throw(std::int64_t permits, std::int64_t wait_ms) {
  detail::sync_args a = with_count(permits);
  a.wait_ms = timed_wait_ms(wait_ms);
  return call_or_throw(sync_call::sem_acquire, a, "try_acquire") != 0;
}
void blocking_semaphore::release(std::int64_t permits) { call_or_throw(sync_call::sem_release, with_count(permits), "release"); }
void blocking_semaphore::release(std::int64_t permits, std::error_code& ec) {
  call(sync_call::sem_release, with_count(permits), ec);
}
bool blocking_semaphore::try_set_permits(std::int64_t permits, std::error_code& ec) {
  return call(sync_call::sem_try_set, with_count(permits), ec) != 0;
}
std::int64_t blocking_semaphore::add_permits(std::int64_t permits, std::error_code& ec) {
  return call(sync_call::sem_add, with_count(permits), ec);
}
std::int64_t blocking_semaphore::drain_permits(std::error_code& ec) { return call(sync_call::sem_drain, {}, ec); }
std::int64_t blocking_semaphore::available_permits(std::error_code& ec) {
  return call(sync_call::sem_available, {}, ec);
}

std::optional<permit_id> blocking_expirable_semaphore::acquire_id(std::int64_t wait_ms, std::int64_t lease_ms,
                                                                  std::error_code& ec) {
  detail::sync_args a;
  a.n = 1;
  a.wait_ms = wait_ms;
  a.lease_ms = lease_ms;
  return run_blocking<std::optional<permit_id>>(
      core_, executor_, ec, [&](detail::client_core& core, detail::basic_completion<std::optional<permit_id>>& done) {
        detail::start_permit_acquire(core, names_, a, done);
      });
}
permit_id blocking_expirable_semaphore::acquire(std::chrono::milliseconds lease) {
  std::error_code ec;
  const std::optional<permit_id> id = acquire_id(forever, lease.count(), ec);
  if (ec) raise(ec, "deadbolt: acquire " + names_->name);
  return id.value_or(permit_id());
}
permit_id blocking_expirable_semaphore::acquire(std::chrono::milliseconds lease, std::error_code& ec) {
  return acquire_id(forever, lease.count(), ec).value_or(permit_id());
}
std::optional<permit_id> blocking_expirable_semaphore::try_acquire(std::chrono::milliseconds wait,
                                                                   std::chrono::milliseconds lease,
                                                                   std::error_code& ec) {
  return acquire_id(timed_wait_ms(wait.count()), lease.count(), ec);
}
namespace {
detail::sync_args with_id(const permit_id& id, std::int64_t lease_ms = 0) {
  detail::sync_args a;
  a.id = id;
  a.lease_ms = lease_ms;
  return a;
}
}  // namespace
void blocking_expirable_semaphore::release(const permit_id& id) {
  call_or_throw(sync_call::permit_release, with_id(id), "release");
}
void blocking_expirable_semaphore::release(const permit_id& id, std::error_code& ec) {
  call(sync_call::permit_release, with_id(id), ec);
}
bool blocking_expirable_semaphore::try_release(const permit_id& id, std::error_code& ec) {
  return call(sync_call::permit_try_release, with_id(id), ec) != 0;
}
bool blocking_expirable_semaphore::update_lease(const permit_id& id, std::chrono::milliseconds lease,
                                                std::error_code& ec) {
  return call(sync_call::permit_update_lease, with_id(id, lease.count()), ec) != 0;
}
bool blocking_expirable_semaphore::try_set_permits(std::int64_t permits, std::error_code& ec) {
  return call(sync_call::sem_try_set, with_count(permits), ec) != 0;
}
std::int64_t blocking_expirable_semaphore::add_permits(std::int64_t permits, std::error_code& ec) {
  return call(sync_call::sem_add, with_count(permits), ec);
}
std::int64_t blocking_expirable_semaphore::available_permits(std::error_code& ec) {
  return call(sync_call::permit_available, {}, ec);
}

bool blocking_count_down_latch::try_set_count(std::int64_t count_value, std::error_code& ec) {
  return call(sync_call::latch_try_set, with_count(count_value), ec) != 0;
}
std::int64_t blocking_count_down_latch::count_down() { return call_or_throw(sync_call::latch_count_down, {}, "count_down"); }
std::int64_t blocking_count_down_latch::count_down(std::error_code& ec) {
  return call(sync_call::latch_count_down, {}, ec);
}
std::int64_t blocking_count_down_latch::count(std::error_code& ec) { return call(sync_call::latch_count, {}, ec); }
void blocking_count_down_latch::await() {
  detail::sync_args a;
  a.wait_ms = forever;
  call_or_throw(sync_call::latch_await, a, "await");
}
void blocking_count_down_latch::await(std::error_code& ec) {
  detail::sync_args a;
  a.wait_ms = forever;
  call(sync_call::latch_await, a, ec);
}
bool blocking_count_down_latch::await_for(std::chrono::milliseconds wait, std::error_code& ec) {
  detail::sync_args a;
  a.wait_ms = timed_wait_ms(wait.count());
  return call(sync_call::latch_await, a, ec) != 0;
}
bool blocking_count_down_latch::await_or_throw(std::int64_t wait_ms) {
  detail::sync_args a;
  a.wait_ms = timed_wait_ms(wait_ms);
  return call_or_throw(sync_call::latch_await, a, "await") != 0;
}
bool blocking_count_down_latch::delete_latch(std::error_code& ec) { return call(sync_call::latch_delete, {}, ec) != 0; }

}  // namespace deadbolt
