#include "deadbolt/blocking.hpp"

#include <condition_variable>
#include <mutex>
#include <string>

#include "deadbolt/port/hooks.hpp"
#if defined(__cpp_exceptions)
#include <system_error>
#endif

namespace deadbolt {
namespace {

// A completion the calling thread waits on; it lives on that thread's stack.
class sync_completion final : public detail::completion {
 public:
  void complete(std::error_code ec, std::int64_t value) override {
    std::lock_guard<std::mutex> guard(mutex_);
    ec_ = ec;
    value_ = value;
    done_ = true;
    ready_.notify_one();
  }
  std::int64_t wait(std::error_code& ec) {
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
  std::int64_t value_ = 0;
};

/// Runs `start(core, completion&)` on the loop and waits for its end.
template <typename Start>
std::int64_t run_blocking(const std::shared_ptr<detail::client_core>& core, const asio::any_io_executor& ex,
                          std::error_code& ec, Start start) {
  sync_completion done;
  asio::post(ex, [&core, &done, &start] { start(*core, done); });
  return done.wait(ec);
}

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
  asio::io_context io{1};
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(io);
  std::shared_ptr<detail::client_core> core;
  std::thread thread;

  explicit loop(const config& cfg) : core(detail::make_client_core(io.get_executor(), cfg)) {
    thread = std::thread([this] { io.run(); });
  }
  ~loop() {
    asio::post(io, [core = core] { detail::shutdown(*core); });
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
  run_blocking(loop_->core, loop_->io.get_executor(), ec,
               [](detail::client_core& core, detail::completion& c) { detail::start_connect(core, c); });
  return ec;
}

blocking_lock blocking_client::lock(std::string_view name) {
  return blocking_lock(loop_->core, loop_->io.get_executor(), name, detail::lock_kind::reentrant);
}

blocking_lock blocking_client::fair_lock(std::string_view name) {
  return blocking_lock(loop_->core, loop_->io.get_executor(), name, detail::lock_kind::fair);
}

blocking_read_write_lock blocking_client::read_write_lock(std::string_view name) {
  return blocking_read_write_lock(loop_->core, loop_->io.get_executor(), name);
}

blocking_fenced_lock blocking_client::fenced_lock(std::string_view name) {
  return blocking_fenced_lock(loop_->core, loop_->io.get_executor(), name);
}

void blocking_client::on_lease_lost(detail::lease_lost_handler handler) {
  asio::post(loop_->io, [core = loop_->core, h = std::move(handler)]() mutable {
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

// ---- blocking_lock ----------------------------------------------------------------------------------

blocking_lock::blocking_lock(std::shared_ptr<detail::client_core> core, asio::any_io_executor ex,
                             std::string_view name, detail::lock_kind kind)
    : blocking_lock_base(std::move(core), std::move(ex), name, kind) {}

blocking_read_write_lock::blocking_read_write_lock(std::shared_ptr<detail::client_core> core,
                                                   asio::any_io_executor ex, std::string_view name)
    : read_(core, ex, name, detail::lock_kind::read), write_(std::move(core), std::move(ex), name, detail::lock_kind::write) {}

bool blocking_lock::try_acquire(std::int64_t wait_ms, std::int64_t lease_ms, std::error_code& ec) {
  return acquire(wait_ms, lease_ms, ec) != 0;
}

bool blocking_lock::try_acquire_or_throw(std::int64_t wait_ms) {
  return acquire_or_throw(wait_ms < 0 ? 0 : wait_ms, 0, "try_lock") != 0;
}

void blocking_lock::lock(std::chrono::milliseconds lease, std::error_code& ec) { acquire(-1, lease.count(), ec); }

void blocking_lock::lock(std::chrono::milliseconds lease) { acquire_or_throw(-1, lease.count(), "lock"); }

bool blocking_lock::try_lock() { return try_acquire_or_throw(0); }

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
  const std::int64_t got = acquire(wait_ms, lease_ms, ec);
  return ec ? std::nullopt : as_token(got);
}

std::optional<std::uint64_t> blocking_fenced_lock::try_acquire_or_throw(std::int64_t wait_ms) {
  return as_token(acquire_or_throw(wait_ms < 0 ? 0 : wait_ms, 0, "try_lock"));
}

std::uint64_t blocking_fenced_lock::lock(std::chrono::milliseconds lease, std::error_code& ec) {
  const std::int64_t got = acquire(-1, lease.count(), ec);
  return ec ? 0 : static_cast<std::uint64_t>(got);
}

std::uint64_t blocking_fenced_lock::lock(std::chrono::milliseconds lease) {
  return static_cast<std::uint64_t>(acquire_or_throw(-1, lease.count(), "lock"));
}

std::optional<std::uint64_t> blocking_fenced_lock::try_lock() { return try_acquire_or_throw(0); }

std::uint64_t blocking_fenced_lock::token(std::error_code& ec) {
  const std::int64_t v = query(detail::lock_query::fencing_token, ec);
  return ec || v < 0 ? 0 : static_cast<std::uint64_t>(v);
}

}  // namespace deadbolt
