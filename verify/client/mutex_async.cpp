// The mutex workload through the async API: every worker is a chain of callbacks on the client's one
// executor, each with an owner id of its own (deadbolt::new_owner_id), all on one client.
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <random>

#include <asio/steady_timer.hpp>
#include <deadbolt/owner_id.hpp>

#include "history.hpp"
#include "lease_probe.hpp"
#include "workload.hpp"

namespace verify {
namespace {

class async_worker : public std::enable_shared_from_this<async_worker> {
 public:
  async_worker(const workload_options& o, int w, deadbolt::client& client, fenced_store& store, hold_table& holds,
               const std::atomic<bool>& stop, std::function<void()> finished)
      : o_(o), w_(w), name_(lock_of(o, w)), lock_(client.fenced_lock(name_)), owner_(deadbolt::new_owner_id()),
        writer_(writer_of(client.id(), owner_)),
        store_(store), holds_(holds), stop_(stop), timer_(client.get_executor()), finished_(std::move(finished)),
        random_(static_cast<std::uint32_t>(now_ns() ^ (w * 7919))) {}

  void next() {
    if (stop_) return finished_();
    hold_ = o_.process + ".a" + std::to_string(w_) + "." + std::to_string(++n_);
    const auto lease = o_.lease.count() > 0 ? o_.lease : o_.watchdog;
    const std::int64_t asked = now_ns();
    event(o_.process, "invoke", "acquire", asked).with("hold", hold_).with("lock", name_).with("api", "async")
        .with("deadline", asked + std::chrono::nanoseconds(o_.wait).count())
        .with("lease_deadline", asked + std::chrono::nanoseconds(lease).count()).emit();
    holds_.set(name_, owner_, hold_);
    lock_.async_try_lock(owner_, o_.wait, o_.lease,
                         [self = shared_from_this()](std::error_code ec, std::optional<std::uint64_t> token) {
                           self->acquired(ec, token);
                         });
  }

 private:
  void acquired(std::error_code ec, std::optional<std::uint64_t> token) {
    if (ec || !token) {
      holds_.clear(name_, owner_);
      event(o_.process, "fail", "acquire").with("hold", hold_).with("lock", name_)
          .with("error", ec ? ec.message() : "timeout").emit();
      if (!ec) return next();
      return after(std::chrono::milliseconds(100), [this] { next(); });  // the server is away: do not spin
    }
    token_ = *token;
    event(o_.process, "ok", "acquire").with("hold", hold_).with("lock", name_).with("token", token_).emit();
    left_ = o_.increments;
    record_lease([this] { increment(); });
  }

  void increment() {
    if (left_-- <= 0) return release();
    step("read", 0, [this](bool ok, std::int64_t value) {
      if (!ok) return release();
      after(std::chrono::milliseconds(random_() % (o_.work.count() + 1)), [this, value] {
        record_lease([this, value] {
          step("write", value + 1, [this](bool ok, std::int64_t) { ok ? increment() : release(); });
        });
      });
    });
  }

  /// One fenced read or write of the register, recorded; `then(accepted, value)`.
  void step(const char* f, std::int64_t value, std::function<void(bool, std::int64_t)> then) {
    const bool is_write = f[0] == 'w';
    event invoke(o_.process, "invoke", f);
    invoke.with("hold", hold_).with("lock", name_).with("token", token_).with("writer", writer_);
    if (is_write) invoke.with("value", value);
    invoke.emit();
    auto done = [self = shared_from_this(), f, is_write, value, then = std::move(then)](store_result r) {
      event e(self->o_.process, r.outcome == store_result::accepted ? "ok" : r.outcome == store_result::stale ? "fail" : "info", f);
      e.with("hold", self->hold_).with("lock", self->name_).with("token", self->token_).with("value", is_write ? value : r.value);
      if (r.outcome == store_result::stale) e.with("error", "stale");
      if (r.outcome == store_result::unknown) e.with("error", r.error);
      e.emit();
      then(r.outcome == store_result::accepted, r.value);
    };
    if (is_write) store_.write(register_of(name_), token_, writer_, value, std::move(done));
    else store_.read(register_of(name_), token_, writer_, std::move(done));
  }

  void release() {
    event(o_.process, "invoke", "release").with("hold", hold_).with("lock", name_).emit();
    lock_.async_unlock(owner_, [self = shared_from_this()](std::error_code ec) {
      self->holds_.clear(self->name_, self->owner_);
      event e(self->o_.process, ec ? "fail" : "ok", "unlock");
      e.with("hold", self->hold_).with("lock", self->name_);
      if (ec) e.with("error", ec.message());
      e.emit();
      if (self->o_.think.count() <= 0) return self->next();
      self->after(std::chrono::milliseconds(self->random_() % (self->o_.think.count() + 1)), [self] { self->next(); });
    });
  }

  template <typename Then>
  void record_lease(Then then) {
    async_lease_deadline(lock_, owner_, now_ns(), [self = shared_from_this(), then](std::int64_t deadline) mutable {
      if (deadline) {
        event(self->o_.process, "ok", "lease").with("hold", self->hold_).with("lock", self->name_)
            .with("lease_deadline", deadline).with("source", "valid_for").emit();
      }
      then();
    });
  }

  template <typename Then>
  void after(std::chrono::milliseconds delay, Then then) {
    timer_.expires_after(delay);
    timer_.async_wait([self = shared_from_this(), then](std::error_code) mutable { then(); });
  }

  const workload_options& o_;
  const int w_;
  const std::string name_;
  deadbolt::fenced_lock lock_;
  const deadbolt::owner_id owner_;
  const std::string writer_;  // the lock field: the fence tells holders of one token apart by it
  fenced_store& store_;
  hold_table& holds_;
  const std::atomic<bool>& stop_;
  asio::steady_timer timer_;
  std::function<void()> finished_;
  std::minstd_rand random_;
  std::string hold_;
  int n_ = 0;
  int left_ = 0;
  std::uint64_t token_ = 0;
};

}  // namespace

void run_async(const workload_options& o, deadbolt::client& client, fenced_store& store, hold_table& holds,
               const std::atomic<bool>& stop) {
  // The chains run on the client's executor (an io_context thread of main's); this thread waits for
  // every chain to see `stop` and finish.
  std::mutex mutex;
  std::condition_variable all_done;
  int running = o.workers;
  for (int w = 0; w < o.workers; ++w) {
    auto worker = std::make_shared<async_worker>(o, w, client, store, holds, stop, [&] {
      std::lock_guard<std::mutex> guard(mutex);
      if (--running == 0) all_done.notify_all();
    });
    asio::post(client.get_executor(), [worker] { worker->next(); });
  }
  std::unique_lock<std::mutex> guard(mutex);
  all_done.wait(guard, [&] { return running == 0; });
}

}  // namespace verify
