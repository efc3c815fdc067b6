// One command in flight. Operations derive from it (no allocation per command): the pipeline links
// it into its queues, writes what encode() produces, and streams the reply's nodes back to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/node.hpp"
#include "pipeline/asking_prefix.hpp"
#include "pipeline/noscript_resend.hpp"
#include "pipeline/script.hpp"

namespace deadbolt::detail {

class request {
 public:
  request() = default;
  request(const request&) = delete;
  request& operator=(const request&) = delete;

  /// Writes the command. Called at submission, and again if the server answered NOSCRIPT.
  virtual void encode(resp::encoder& out) = 0;
  /// Every node of the reply, in pre-order; the node's strings live until on_node returns.
  virtual void on_node(const resp::node& n) = 0;
  /// After the reply's last node (ec empty), or when the request failed: not_connected if it was
  /// never sent, outcome_unknown / timed_out if it was sent but no reply came.
  virtual void on_done(std::error_code ec) = 0;

  // ---- What the operation says (set before each submission; nobody else writes these) ----

  /// Set by encode() when it writes EVALSHA (begin_script, pipeline/script_call.hpp; the pipeline
  /// clears it before each encode). A NOSCRIPT reply then makes the pipeline send the request again
  /// as EVAL (see send_script_body()), which also caches the script on the server; the request never
  /// sees the NOSCRIPT.
  bool runs_script = false;
  /// The key whose node must run the request (a script's first key); empty: any node. Read by the
  /// topology in submit() only.
  std::string_view route_key;
  /// Replica sync (config::replica_sync): when its server has replicas, the connection ends the write
  /// that carries the command with a WAIT (shared by every such command in that write), and tells the
  /// answer below. Set by the operations whose scripts write a hold (acquire, unlock, renewal), and
  /// by a check that writes a found hold again to confirm it (a lock's refresh).
  bool syncs_replicas = false;
  /// Set by the operations on an acquire's attempt (it takes a hold or permits). Behind Sentinel such
  /// a request waits while what the client knows of the master is too old, until the sentinels were
  /// asked and ROLE confirmed it (src/sentinel/sentinel_view.hpp).
  bool acquires = false;

  // ---- What the transport tells it (written by the pipeline or the cluster routing only) ----

  /// Send the script's body (EVAL) rather than its hash: set by the pipeline after a NOSCRIPT, for
  /// the resend; every submission starts without it.
  bool send_script_body() const noexcept { return pipe_.script.send_body(); }
  /// Before on_done(): how many replicas the WAIT asked for (0: no WAIT was written), and how many
  /// acknowledged the command's writes in time (-1: the server refused WAIT).
  std::int32_t replicas_wanted() const noexcept { return pipe_.replicas_wanted; }
  std::int32_t replicas_acked() const noexcept { return pipe_.replicas_acked; }
  /// Asked for replicas, and none acknowledged: a failover now could lose what the command wrote.
  bool replicas_unsynced() const noexcept { return pipe_.replicas_wanted > 0 && pipe_.replicas_acked == 0; }
  /// When the pipeline fails it unanswered (or a gate holding it before the pipeline does).
  std::int64_t deadline_ns() const noexcept { return pipe_.deadline_ns; }

  /// Cluster: the routing's record of the request (src/cluster/cluster_routing.hpp).
  struct route_record {
    /// Write ASKING right before the command (a redirection by ASK, for one resend).
    bool asking = false;
    /// How many times the command was redirected without a pause (the routing bounds it).
    std::uint8_t redirects = 0;
    /// The redirections went round in a loop at least once (the error if the wait runs out).
    bool redirect_looped = false;
    /// When the routing stops waiting for the slot to be served (set when it first waits).
    std::int64_t give_up_ns = 0;
  };
  const route_record& route() const noexcept { return route_; }

 private:
  friend class pipeline;        // pipe_
  friend class replica_wait;    // pipe_: the replicas' answer, the deadline it extends
  friend class request_queue;   // pipe_.next_in_queue
  friend class cluster_routing; // route_
  friend class sentinel_gate;   // pipe_.deadline_ns of the requests it holds before the pipeline
  friend struct request_test_access;  // the socket-free suites (tests/core/), which script these

  // The pipeline's record while it holds the request: its queue link and deadline, and one part per
  // protocol it runs around the command (NOSCRIPT, ASKING, replica sync's WAIT).
  struct pipeline_record {
    request* next_in_queue = nullptr;
    std::int64_t deadline_ns = 0;
    std::size_t encoded_size = 0;
    noscript_resend script;
    asking_prefix asking;
    std::int32_t replicas_wanted = 0;
    std::int32_t replicas_acked = 0;
  };

  route_record route_;
  pipeline_record pipe_;

 protected:
  ~request() = default;
};

/// An intrusive FIFO of requests.
class request_queue {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  request* front() const noexcept { return head_; }
  void push_back(request& r) noexcept {
    r.pipe_.next_in_queue = nullptr;
    if (tail_) tail_->pipe_.next_in_queue = &r; else head_ = &r;
    tail_ = &r;
  }
  void push_front(request& r) noexcept {
    r.pipe_.next_in_queue = head_;
    head_ = &r;
    if (!tail_) tail_ = &r;
  }
  request* pop_front() noexcept {
    request* r = head_;
    if (r) {
      head_ = r->pipe_.next_in_queue;
      if (!head_) tail_ = nullptr;
      r->pipe_.next_in_queue = nullptr;
    }
    return r;
  }
  /// Moves all of `other` to the back of this queue.
  void splice_back(request_queue& other) noexcept {
    if (other.empty()) return;
    if (tail_) tail_->pipe_.next_in_queue = other.head_; else head_ = other.head_;
    tail_ = other.tail_;
    other.head_ = other.tail_ = nullptr;
  }

 private:
  request* head_ = nullptr;
  request* tail_ = nullptr;
};

}  // namespace deadbolt::detail
