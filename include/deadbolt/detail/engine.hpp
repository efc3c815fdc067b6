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
#include "deadbolt/detail/lock_names.hpp"
#include "deadbolt/inspect.hpp"
#include "deadbolt/reply.hpp"
#include "deadbolt/spin_backoff.hpp"

namespace deadbolt {

/// What client::on_lease_lost and blocking_client::on_lease_lost call: the lock's name and the owner
/// whose lease was found lost.
using lease_lost_handler = std::function<void(std::string_view lock_name, std::int64_t owner)>;

}  // namespace deadbolt

namespace deadbolt::detail {

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
                        set_lease, valid_for };
op_ref start_query(client_core& core, const std::shared_ptr<const lock_names>& names, lock_query q,
                   std::int64_t owner, completion& done, std::int64_t lease_ms = 0);

}  // namespace deadbolt::detail
