// The engine's entry points behind the public lock objects. They run on the client's executor and
// report through a completion; they are not meant to be called directly.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <vector>

#include "deadbolt/config.hpp"
#include "deadbolt/detail/async.hpp"
#include "deadbolt/inspect.hpp"
#include "deadbolt/reply.hpp"
#include "deadbolt/spin_backoff.hpp"

namespace deadbolt {

/// What client::on_lease_lost and blocking_client::on_lease_lost call: the lock's name and the owner
/// whose lease was found lost.
using lease_lost_handler = std::function<void(std::string_view lock_name, std::int64_t owner)>;

}  // namespace deadbolt

namespace deadbolt::detail {

/// Which scripts a lock runs and how its waiters wait: one protocol per kind (src/lock/lock_protocol.hpp).
/// reentrant, fenced, spin and fair share the hash layout; read and write are the halves of a
/// read/write lock.
enum class lock_kind { reentrant, fenced, spin, fair, read, write };

class lock_protocol;
/// Each kind's protocol (src/lock/reentrant_protocol.cpp, fair_lock.cpp, read_write_lock.cpp). A lock
/// object names its own when it is made (protocol_for), so a static program links only the kinds it uses.
const lock_protocol& reentrant_protocol();
const lock_protocol& fenced_protocol();
const lock_protocol& spin_protocol();
const lock_protocol& fair_protocol();
const lock_protocol& read_protocol();
const lock_protocol& write_protocol();
template <lock_kind Kind>
const lock_protocol& protocol_for() {
  if constexpr (Kind == lock_kind::fenced) return fenced_protocol();
  if constexpr (Kind == lock_kind::spin) return spin_protocol();
  if constexpr (Kind == lock_kind::fair) return fair_protocol();
  if constexpr (Kind == lock_kind::read) return read_protocol();
  if constexpr (Kind == lock_kind::write) return write_protocol();
  if constexpr (Kind == lock_kind::reentrant) return reentrant_protocol();
}

/// The Redis names one lock uses (docs/protocol.md §0), built once per lock object, its kind and the
/// kind's protocol.
struct lock_names {
  std::string name;          ///< the lock hash: the bare name
  std::string channel;       ///< redisson_lock__channel:{name}; read/write: redisson_rwlock:{name}
  std::string latch_prefix;  ///< redisson_unlock_latch:{name}
  std::string token_key;     ///< redisson_lock_token:{name} (fenced lock)
  std::string queue;         ///< redisson_lock_queue:{name} (fair lock)
  std::string timeouts;      ///< redisson_lock_timeout:{name} (fair lock)
  std::string key_prefix;    ///< {name}, or the name if it has a '{' (read/write lock)
  lock_kind kind = lock_kind::reentrant;
  const lock_protocol* protocol = nullptr;
  spin_backoff backoff;      ///< spin lock: the pause between attempts
};

std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind, const lock_protocol& protocol,
                                                  const spin_backoff& backoff = {});
template <lock_kind Kind>
std::shared_ptr<const lock_names> make_lock_names(std::string_view name, const spin_backoff& backoff = {}) {
  return make_lock_names(name, Kind, protocol_for<Kind>(), backoff);
}
/// The same with the kind known only at run time (links every kind's protocol; tests and tools).
std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind = lock_kind::reentrant,
                                                  const spin_backoff& backoff = {});

/// Creates the engine; errors in `cfg` are kept and reported by every operation. The engine keeps
/// `keep_alive` until it is destroyed itself (a blocking client's io_context).
std::shared_ptr<client_core> make_client_core(const asio::any_io_executor& ex, const config& cfg,
                                              std::shared_ptr<void> keep_alive = {});
/// Stops the connections; running operations complete with errc::shutting_down.
void shutdown(client_core& core);
std::error_code config_error(const client_core& core);
const std::string& client_id(const client_core& core);
/// config::watchdog_timeout: the lease of a hold taken without one.
std::chrono::milliseconds watchdog_lease(const client_core& core);

using lease_lost_handler = deadbolt::lease_lost_handler;
/// Called on the client's executor when a held lock's lease is found lost.
void set_lease_lost_handler(client_core& core, lease_lost_handler handler);

op_ref start_connect(client_core& core, completion& done);

/// Any command; an error reply completes with its error code and the reply (holding the text).
op_ref start_command(client_core& core, std::vector<std::string> args, basic_completion<reply>& done);

struct result_reply {
  using value_type = reply;
  using signature = void(std::error_code, reply);
  template <typename H>
  static void call(H& h, std::error_code ec, reply r) { std::move(h)(ec, std::move(r)); }
};

/// Reads every key of `name` with one script (lua/inspect.lua) and says what they are.
op_ref start_inspect(client_core& core, std::string_view name, basic_completion<object_info>& done);

struct result_object_info {
  using value_type = object_info;
  using signature = void(std::error_code, object_info);
  template <typename H>
  static void call(H& h, std::error_code ec, object_info info) { std::move(h)(ec, std::move(info)); }
};

/// wait_ms: < 0 waits forever, 0 does not wait. lease_ms: 0 means the watchdog lease.
/// Completes with 0 if the wait ran out; when acquired, with 1, or the fencing token (fenced).
op_ref start_acquire(client_core& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                     std::int64_t wait_ms, std::int64_t lease_ms, completion& done);
/// Completes with value 1 when fully released, 0 when still held (reentrant).
op_ref start_unlock(client_core& core, const std::shared_ptr<const lock_names>& names, std::int64_t owner,
                    completion& done);

/// set_lease: PEXPIRE to `lease_ms` if `owner` still holds it (1, else 0): a multi lock's members.
enum class lock_query { force_unlock, is_locked, is_held_by, hold_count, remaining_ttl, lease_lost, fencing_token,
                        set_lease };
op_ref start_query(client_core& core, const std::shared_ptr<const lock_names>& names, lock_query q,
                   std::int64_t owner, completion& done, std::int64_t lease_ms = 0);

}  // namespace deadbolt::detail
