// The check that keeps a client behind Sentinel from acquiring on a master the sentinels may have
// replaced without its hearing of it (src/sentinel/sentinel_view.hpp says when what it knows is too
// old: its watch went silent or away). An acquire submitted then is held; the sentinels are asked
// (SENTINEL GET-MASTER-ADDR-BY-NAME, through a sentinel_addresses of its own, bounded per sentinel);
//   - they name the server the command connection uses: ROLE on that connection confirms it is a
//     master, and the held requests go;
//   - they name another server: the owner moves the connections there (as on +switch-master), and
//     the held requests go once the command connection is ready there (ROLE confirmed at its login);
//   - none answers: asked again after the reconnect backoff.
// A held request fails at its deadline (config::command_timeout) with what the last round of
// sentinels said, or errc::not_connected (which waits ride out). While the command connection is not
// ready, nothing is held: its next login asks the sentinels and confirms ROLE before anything goes.
// The sentinels are also asked, without anything held, when the watch has subscribed again after a
// gap (sentinel_view::ask_due()).
#pragma once

#include <cstdint>
#include <memory>
#include <system_error>

#include "base/observer.hpp"
#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pipeline/request.hpp"
#include "sentinel/sentinel_addresses.hpp"
#include "sentinel/sentinel_view.hpp"
#include "wire/address_source.hpp"
#include "wire/connection.hpp"
#include "wire/reconnect_backoff.hpp"

namespace deadbolt::detail {

class sentinel_gate final : private address_sink {
 public:
  class listener {
   public:
    /// The sentinels name `to` as the master, and the command connection uses another server: move
    /// the connections there. Null: its server no longer answers ROLE as a master although the
    /// sentinels name it: move them wherever the sentinels say next. Runs inside connections' reply
    /// routing.
    virtual void on_master_moved(const server_address* to) = 0;

   protected:
    ~listener() = default;
  };

  sentinel_gate(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                std::shared_ptr<sentinel_preference> preference, sentinel_view& view, listener& owner);
  ~sentinel_gate();

  void attach(std::shared_ptr<connection> commands) { commands_ = std::move(commands); }
  /// See master_finder::admit().
  bool admit(request& r);
  /// See master_finder::commands_ready().
  void commands_ready();
  bool holding() const noexcept { return !held_.empty(); }
  /// Asks the sentinels now if the view says a switch may have gone unheard.
  void check_due();
  void stop();

 private:
  class role_check;
  enum class phase : std::uint8_t { idle, asking, checking_role, awaiting_ready, backing_off };

  void hold(request& r, std::int64_t now_ns);
  void ask();
  void on_address(std::error_code ec, const server_address& where) override;
  void check_role();
  void role_answered(std::error_code ec, bool master);
  void release();
  void arm_hold_timer();
  void expire_held();
  void after_failed_round();

  asio::any_io_executor executor_;
  endpoint ep_;
  config cfg_;
  std::shared_ptr<sentinel_preference> preference_;
  sentinel_view& view_;
  listener& owner_;
  observer observe_;
  std::shared_ptr<connection> commands_;
  std::unique_ptr<sentinel_addresses> asker_;  // made with the first question
  std::unique_ptr<role_check> role_check_;
  phase phase_ = phase::idle;
  std::int64_t asked_ns_ = 0;  // when the current round began: what it learns is known as of then
  request_queue held_;
  asio::steady_timer hold_timer_;   // the first held request's deadline
  asio::steady_timer retry_timer_;  // the next round after one nobody answered
  bool hold_timer_armed_ = false;
  reconnect_backoff backoff_;
  std::error_code last_error_;  // what the last round that failed said
  bool recheck_ = false;  // a ROLE is due once the one in flight (sent before this round) is answered
  bool stopped_ = false;
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // timer handlers check it
};

}  // namespace deadbolt::detail
