// The command pipeline as a sans-I/O state machine: requests are encoded into one output buffer as
// they come, written together (one write for everything queued meanwhile), and replies are matched to
// requests in order. The transport (connection.cpp) only moves bytes and runs timers.
//
// Around the commands it orders three small protocols, each a piece of its own: a NOSCRIPT reply sends
// the script again with its body (noscript_resend), an ASK redirection's resend goes with ASKING
// (asking_prefix), and replica sync ends a write with WAIT and holds what is queued until it answers
// (replica_wait).
#pragma once

#include <string>
#include <string_view>
#include <system_error>

#include "deadbolt/resp/decoder.hpp"
#include "deadbolt/resp/read_buffer.hpp"
#include "pipeline/pipeline_listeners.hpp"
#include "pipeline/replica_wait.hpp"
#include "pipeline/request.hpp"

namespace deadbolt::detail {

class pipeline {
 public:
  explicit pipeline(const resp::limits& limits);
  ~pipeline();

  /// Queues `r` (encoding it now). It is written by the next take_output().
  void submit(request& r, std::int64_t deadline_ns);
  /// Queues a connection set-up command (HELLO, AUTH, SELECT): written ahead of everything queued.
  /// Until end_handshake(), only such commands are written.
  void submit_handshake(request& r, std::int64_t deadline_ns);
  /// The login is done: from now on everything queued is written (whether a WAIT follows the synced
  /// ones is decided when they are written, by what the login's ROLE said).
  void end_handshake() noexcept { holding_ = false; }

  /// From now on, top-level replies with no request (or all of them, in subscriber mode) go here.
  /// In subscriber mode a request is done once written: its confirmation arrives as a push.
  void set_push_handler(push_handler* h, bool all_replies_are_pushes) noexcept {
    push_ = h;
    all_pushes_ = all_replies_are_pushes;
  }

  /// From now on, cluster redirections go to `h` instead of to their request (null: to the request,
  /// as on a standalone server).
  void set_redirect_handler(redirect_handler* h) noexcept { redirect_ = h; }
  /// Error replies are told to `l` too (null: to nobody).
  void set_error_listener(error_reply_listener* l) noexcept {
    errors_ = l;
    wait_.set_error_listener(l);
  }

  /// Replica sync: whether a write with requests that syncs_replicas ends with a WAIT (the connection
  /// keeps it informed of the server's replicas). The WAIT's answer goes to each of those requests
  /// (replicas_acked, before on_done), never to on_node; so does the ROLE after it, which the roster
  /// reads.
  replica_sync& replicas() noexcept { return wait_.sync(); }
  /// True when queued bytes may be written now: no write is in flight, and no WAIT (the server would
  /// not run them before it answers; held, they share the next one).
  bool can_write() const noexcept {
    return !writing_ && (!handshake_out_.empty() || (!holding_ && !wait_.in_flight() && !out_.empty()));
  }
  /// A WAIT is in flight: the server runs nothing more of this connection's until it answers.
  bool waiting_for_replicas() const noexcept { return wait_.in_flight(); }
  /// The bytes to write; the requests they belong to now await replies. Call write_done() after.
  const std::string& take_output();
  void write_done();

  /// Feeds received bytes: decodes every complete node and routes it. An error means the stream
  /// cannot be trusted any more (malformed reply, or a reply nobody asked for): drop the connection.
  std::error_code on_input(resp::read_buffer& in);

  /// After the connection dropped: requests that were sent fail with `sent_error`; requests not yet
  /// written stay queued (their bytes are re-encoded) for the next connection.
  void connection_lost(std::error_code sent_error);
  /// Fails every request, sent or not (shutdown).
  void fail_all(std::error_code ec);
  /// Hands over the requests not yet written, which never reached the server (a cluster sends them to
  /// another node); their bytes are dropped.
  void take_unsent(request_queue& out) {
    out_.clear();
    out.splice_back(queued_);
  }
  /// Fails the requests not yet written (a definitive login failure: waiting would not help).
  void fail_unsent(std::error_code ec);
  /// Fails requests whose deadline passed. Returns true if a *sent* request (or a WAIT) timed out, which
  /// means the connection is stuck and must be dropped (replies are in order; one cannot be skipped).
  /// Only the oldest sent one is judged: what is behind it waits for it, and what is held behind a WAIT
  /// is not sent (its deadline allows for the WAIT).
  bool expire(std::int64_t now_ns, std::error_code unsent_error);
  /// The earliest deadline of a queued request, or 0 when none.
  std::int64_t next_deadline() const noexcept;

  bool idle() const noexcept { return queued_.empty() && sent_.empty() && handshake_queued_.empty(); }

 private:
  // Queues `r` as it is (submit() and the NOSCRIPT resend, which keeps send_script_body set).
  void enqueue(request& r, std::int64_t deadline_ns);

  void encode_into(std::string& out, request& r);
  std::error_code route(const resp::node& n, bool end_of_reply);

  resp::decoder decoder_;
  std::string out_;             // bytes of queued_
  std::string handshake_out_;   // bytes of handshake_queued_
  std::string writing_buffer_;  // bytes of the write in flight
  bool writing_ = false;
  bool holding_ = true;         // only handshake commands may be written
  request_queue handshake_queued_;
  request_queue queued_;        // encoded into out_, not yet handed to a write
  request_queue sent_;          // written (or being written), awaiting replies in order
  request_queue unanswered_;    // written in subscriber mode, where commands get no in-order reply
  replica_wait wait_;           // nothing more is written while its WAIT is in flight
  push_handler* push_ = nullptr;
  redirect_handler* redirect_ = nullptr;
  error_reply_listener* errors_ = nullptr;
  bool all_pushes_ = false;
  bool in_push_ = false;        // routing the nodes of a push reply
  bool interrupted_ = false;    // a callback dropped the connection while input was being routed
};

}  // namespace deadbolt::detail
