// Replica sync: asks a replica that left the master (replica_roster) whether it is a master now:
// ROLE over a connection of its own, to the address the master listed, with the master's credentials
// and TLS (no ROLE at login, no replica sync, no logs or metrics of its own), closed once it has
// answered. No answer (refused, unreachable, silent until the deadline) counts as "not a master": a
// server the client cannot reach is not one it would move to. One the master never listed (only the
// sentinels named it) may be a master for another reason: the old master of a failover this master
// came from, not demoted yet. So it is asked INFO replication instead, and so is the master itself
// (over the connection the check works for), and it counts as promoted only if it continued this
// master's history (promoted_from); without both answers (an ACL without INFO), as not promoted.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <system_error>

#include "deadbolt/config.hpp"
#include "deadbolt/port/asio_core.hpp"
#include "pipeline/replica_roster.hpp"
#include "pipeline/request.hpp"
#include "pipeline/role_reader.hpp"
#include "wire/connection.hpp"

namespace deadbolt::detail {

class replica_check final : public replica_question, private connection_listener {
 public:
  /// As make_replica_check (src/wire/connection.hpp); the short connections copy `ep` and `cfg`.
  replica_check(asio::any_io_executor ex, const endpoint& ep, const config& cfg, connection& master,
                replica_check_listener& listener);
  ~replica_check() override;

  bool busy() const noexcept override { return busy_; }
  void ask(const replica_roster::member& m) override;
  void stop() noexcept override;

 private:
  // ROLE, or INFO replication, to one server; `waited` while the check needs its answer.
  class question final : public request {
   public:
    explicit question(replica_check& check) : check_(check) {}
    void prepare(bool history);
    void encode(resp::encoder& e) override;
    void on_node(const resp::node& n) override;
    void on_done(std::error_code ec) override;

    bool waited = false;
    bool queued = false;  // submitted to a connection that has not answered it yet (ours_ only)
    bool failed = false;
    role_reader role;
    replication_info info;

   private:
    replica_check& check_;
    bool history_ = false;
  };

  void on_connected() override {}
  void on_disconnected(std::error_code) override {}
  void on_connect_failed(std::error_code ec) override;
  void close() noexcept;
  // One of the answers is in (or failed): once every answer the check needs is, decide.
  void answer_in(std::error_code ec);

  asio::any_io_executor executor_;
  endpoint endpoint_;  // the master's, with the replica's address put in for each question
  config config_;      // the master's, without replica sync, logs or metrics
  connection& master_;
  replica_check_listener& listener_;
  std::shared_ptr<connection> conn_;  // to the replica asked
  question theirs_{*this};            // to it
  question ours_{*this};              // to the master (INFO replication only)
  std::string host_;
  std::uint16_t port_ = 0;
  bool history_ = false;
  bool busy_ = false;
  std::error_code error_;
  std::uint64_t generation_ = 0;  // bumps on every stop: a posted answer of an older question is dropped
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);  // posted handlers check it
};

}  // namespace deadbolt::detail
