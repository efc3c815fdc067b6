// Replica sync's WAIT, one piece of the pipeline. A write that carries requests which sync replicas
// ends with one `WAIT`, which answers for every write the connection made before it, so those requests
// share it. The server runs nothing else of the connection's while it waits, so the pipeline writes
// nothing more until the WAIT has answered: what is queued meanwhile is held (its deadline allows for
// that WAIT) and goes in the next write, with the next WAIT. However many synced requests a connection
// carries, one waits at most two WAITs (the one in flight and its own), and a WAIT in flight never
// makes what is queued behind it look stuck. A ROLE follows the WAIT in the same write (once the
// server's ROLE has answered): the synced requests are done when it answers, their acknowledgements
// judged by the replicas it lists (replica_roster).
#pragma once

#include <cstdint>
#include <string>
#include <system_error>

#include "pipeline/pipeline_listeners.hpp"
#include "pipeline/replica_sync.hpp"
#include "pipeline/request.hpp"

namespace deadbolt::detail {

class replica_wait {
 public:
  /// What the connection knows of the server's replicas, and the policy.
  replica_sync& sync() noexcept { return sync_; }
  /// Hears a refused WAIT (null: nobody).
  void set_error_listener(error_reply_listener* l) noexcept { errors_ = l; }

  /// A WAIT is in flight: the server runs nothing more of this connection's until it answers.
  bool in_flight() const noexcept { return waiting_; }
  /// How much later a request may be answered for a WAIT it is held behind (or ends with).
  std::int64_t allowance_ns() const noexcept { return sync_.timeout_ms() * 1'000'000; }

  /// A write of `queued` (encoded, in order) is being taken: when it carries requests that sync
  /// replicas, appends WAIT (and ROLE) to `out` and their own requests to `queued`, and tells each
  /// synced request how many replicas were asked for. Nothing when sync is off or none syncs.
  void end_write(request_queue& queued, std::string& out) {
    if (const std::int32_t wanted = sync_.wanted(); wanted > 0) end_write_synced(queued, out, wanted);
  }
  /// Whether `r` is the WAIT or the ROLE after it (their replies are theirs, whatever they say).
  bool owns(const request* r) const noexcept { return r == &wait_ || r == &wait_role_; }
  /// `r`'s own reply is complete. When it asked for replicas it is done once the WAIT written after it
  /// answers: held here (returns true) until then.
  bool holds_until_answered(request& r) {
    if (r.pipe_.replicas_wanted <= 0) return false;
    synced_.push_back(r);
    return true;
  }
  /// The connection dropped: the WAIT and ROLE in flight fail with the others sent (they complete
  /// what they hold); nothing is in flight any more.
  void connection_lost() noexcept { waiting_ = false; }

 private:
  // The WAIT at the end of a write, in the pipeline's sent queue after the requests it answers for.
  class shared_wait final : public request {
   public:
    explicit shared_wait(replica_wait& w) : w_(w) {}
    void encode(resp::encoder&) override {}  // written by end_write()
    void on_node(const resp::node& n) override;
    void on_done(std::error_code ec) override;
    std::int32_t acked = 0;

   private:
    replica_wait& w_;
  };
  // The ROLE written right after that WAIT: which replicas the master lists once the WAIT has
  // answered. Its answer (or the connection's loss) completes the synced requests instead.
  class role_after_wait final : public request {
   public:
    explicit role_after_wait(replica_wait& w) : w_(w) {}
    void encode(resp::encoder&) override {}  // written by end_write()
    void on_node(const resp::node& n) override { role.take(n); }
    void on_done(std::error_code ec) override;
    role_reader role;

   private:
    replica_wait& w_;
  };

  void end_write_synced(request_queue& queued, std::string& out, std::int32_t wanted);
  void complete_synced(std::error_code ec, std::int32_t acked);

  replica_sync sync_;
  error_reply_listener* errors_ = nullptr;
  request_queue synced_;        // answered, awaiting the WAIT written after them
  shared_wait wait_{*this};
  role_after_wait wait_role_{*this};
  bool waiting_ = false;        // wait_ (and wait_role_) in flight
  bool role_follows_ = false;   // wait_role_ was written after wait_: it completes the synced requests
};

}  // namespace deadbolt::detail
