// The engine's entry points behind the semaphores and the count-down latch (src/semaphore/). They run on
// the client's executor and report through a completion; they are not meant to be called directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/detail/async.hpp"
#include "deadbolt/permit_id.hpp"

namespace deadbolt {
namespace detail {

enum class sync_kind : std::uint8_t { semaphore, expirable, latch };

/// The Redis names one semaphore or latch uses (docs/protocol.md §8-§10), built once per object.
struct sync_names {
  std::string name;      ///< the counter: the bare name (STRING)
  std::string channel;   ///< redisson_sc:{name}, or redisson_countdownlatch__channel__{name}
  std::string timeouts;  ///< {name}:timeout (expirable semaphore: ZSET of permits)
  sync_kind kind = sync_kind::semaphore;
};
std::shared_ptr<const sync_names> make_sync_names(std::string_view name, sync_kind kind);

/// Every operation of the three kinds.
enum class sync_call : std::uint8_t {
  sem_acquire,        ///< n permits, waiting up to wait_ms; 1 = taken, 0 = the wait ran out
  sem_release,        ///< n permits; the new available count
  sem_try_set,        ///< n; 1 = set, 0 = it existed (both semaphore kinds)
  sem_add,            ///< n (may be negative); the new available count (both semaphore kinds)
  sem_drain,          ///< how many were taken
  sem_available,      ///< the available count
  permit_acquire,     ///< wait_ms, lease_ms (0: no lease); a permit id, or none when the wait ran out
  permit_release,     ///< id; errc::no_such_permit if it is not held (unknown, released or expired)
  permit_try_release, ///< id; 1 = released, 0 = not held
  permit_update_lease,///< id, lease_ms; 1 = updated, 0 = not held
  permit_available,   ///< reclaims expired permits; the available count
  latch_try_set,      ///< n; 1 = set, 0 = it existed
  latch_count_down,   ///< the new count (<= 0: reached zero and deleted)
  latch_count,        ///< the count (0 if the latch does not exist)
  latch_await,        ///< waits up to wait_ms for zero; 1 = zero, 0 = the wait ran out
  latch_delete,       ///< 1 = it existed
};

struct sync_args {
  std::int64_t n = 0;
  std::int64_t wait_ms = 0;   ///< < 0 waits forever, 0 does not wait
  std::int64_t lease_ms = 0;  ///< expirable semaphore: 0 = no lease (never expires)
  permit_id id;
};

op_ref start_sync(client_core& core, const std::shared_ptr<const sync_names>& names, sync_call call,
                  const sync_args& args, completion& done);
op_ref start_permit_acquire(client_core& core, const std::shared_ptr<const sync_names>& names,
                            const sync_args& args, basic_completion<std::optional<permit_id>>& done);

struct result_permit {
  using value_type = std::optional<permit_id>;
  using signature = void(std::error_code, permit_id);
  template <typename H>
  static void call(H& h, std::error_code ec, value_type v) { std::move(h)(ec, v ? *v : permit_id()); }
};
struct result_optional_permit {
  using value_type = std::optional<permit_id>;
  using signature = void(std::error_code, std::optional<permit_id>);
  template <typename H>
  static void call(H& h, std::error_code ec, value_type v) { std::move(h)(ec, std::move(v)); }
};

/// What the three public kinds share: the client, the names, and running an engine call.
class sync_base {
 public:
  using executor_type = asio::any_io_executor;

  const std::string& name() const noexcept { return names_->name; }
  executor_type get_executor() const noexcept { return executor_; }

 protected:
  sync_base(std::shared_ptr<client_core> core, executor_type ex, std::string_view name, sync_kind kind)
      : core_(std::move(core)), executor_(std::move(ex)), names_(make_sync_names(name, kind)) {}

  template <typename Result, typename Token>
  auto run(sync_call call, const sync_args& args, Token&& token) {
    return async_run<Result>(core_, executor_, std::forward<Token>(token),
                             [names = names_, call, args](auto& core, auto& c) {
                               return start_sync(core, names, call, args, c);
                             });
  }
  static sync_args count(std::int64_t n) {
    sync_args a;
    a.n = n;
    return a;
  }
  static std::int64_t wait_arg(std::chrono::milliseconds wait) { return wait.count() < 0 ? -1 : wait.count(); }

  std::shared_ptr<client_core> core_;
  executor_type executor_;
  std::shared_ptr<const sync_names> names_;
};

}  // namespace detail
}  // namespace deadbolt
