// One command in flight. Operations derive from it (no allocation per command): the pipeline links
// it into its queues, writes what encode() produces, and streams the reply's nodes back to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/encoder.hpp"
#include "deadbolt/resp/node.hpp"
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

  /// Set by requests whose encode() writes EVALSHA (see encode_script_call; the pipeline clears it
  /// before each encode). A NOSCRIPT reply then makes the pipeline set send_script_body and send the
  /// request again as EVAL, which also caches the script on the server; the request never sees the
  /// NOSCRIPT. Every submission starts with send_script_body cleared by the pipeline: the operations
  /// reset neither.
  bool runs_script = false;
  bool send_script_body = false;
  /// The key whose node must run the request (a script's first key); empty: any node. Read by the
  /// topology in submit() only.
  std::string_view route_key;

  /// Replica sync (config::replica_sync): when its server has replicas, the connection ends the write
  /// that carries the command with a WAIT (shared by every such command in that write), and keeps the
  /// answer below. Set by the operations whose scripts write a hold (acquire, unlock, renewal), and
  /// by a check that writes a found hold again to confirm it (a lock's refresh).
  bool syncs_replicas = false;
  /// Set before on_done(): how many replicas the WAIT asked for (0: no WAIT was written), and how many
  /// acknowledged the command's writes in time (-1: the server refused WAIT).
  std::int32_t replicas_wanted = 0;
  std::int32_t replicas_acked = 0;
  /// Asked for replicas, and none acknowledged: a failover now could lose what the command wrote.
  bool replicas_unsynced() const noexcept { return replicas_wanted > 0 && replicas_acked == 0; }

  /// Set by the operations on an acquire's attempt (it takes a hold or permits). Behind Sentinel such
  /// a request waits while what the client knows of the master is too old, until the sentinels were
  /// asked and ROLE confirmed it (src/sentinel/sentinel_view.hpp).
  bool acquires = false;

  /// Cluster: write ASKING right before the command (a redirection by ASK, for one resend).
  bool asking = false;
  /// Cluster: how many times the command was redirected without a pause (the topology bounds it).
  std::uint8_t redirects = 0;
  /// Cluster: the redirections went round in a loop at least once (the error if the wait runs out).
  bool redirect_looped = false;
  /// Cluster: when the topology stops waiting for the slot to be served (set when it first waits).
  std::int64_t give_up_ns = 0;

  // Owned by the pipeline while queued.
  request* next_in_queue = nullptr;
  std::int64_t deadline_ns = 0;
  std::size_t encoded_size = 0;
  bool reply_is_noscript = false;
  bool awaiting_asking_reply = false;

 protected:
  ~request() = default;
};

/// An intrusive FIFO of requests.
class request_queue {
 public:
  bool empty() const noexcept { return head_ == nullptr; }
  request* front() const noexcept { return head_; }
  void push_back(request& r) noexcept {
    r.next_in_queue = nullptr;
    if (tail_) tail_->next_in_queue = &r; else head_ = &r;
    tail_ = &r;
  }
  void push_front(request& r) noexcept {
    r.next_in_queue = head_;
    head_ = &r;
    if (!tail_) tail_ = &r;
  }
  request* pop_front() noexcept {
    request* r = head_;
    if (r) {
      head_ = r->next_in_queue;
      if (!head_) tail_ = nullptr;
      r->next_in_queue = nullptr;
    }
    return r;
  }
  /// Moves all of `other` to the back of this queue.
  void splice_back(request_queue& other) noexcept {
    if (other.empty()) return;
    if (tail_) tail_->next_in_queue = other.head_; else head_ = other.head_;
    tail_ = other.tail_;
    other.head_ = other.tail_ = nullptr;
  }

 private:
  request* head_ = nullptr;
  request* tail_ = nullptr;
};

}  // namespace deadbolt::detail
