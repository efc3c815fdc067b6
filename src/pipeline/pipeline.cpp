#include "pipeline/pipeline.hpp"

#include <algorithm>

#include "deadbolt/error.hpp"
#include "pipeline/script_call.hpp"

namespace deadbolt::detail {
namespace {

bool is_noscript(const resp::node& n) {
  return n.depth == 0 && resp::is_error(n.type) && server_error_kind_of(n.value) == server_error_kind::noscript;
}

// An answer that the command did not run here: a cluster's MOVED, ASK, TRYAGAIN, CLUSTERDOWN, or a
// demoted master's READONLY.
bool is_cluster_redirect(const resp::node& n) {
  if (n.depth != 0 || !resp::is_error(n.type)) return false;
  const server_error_kind kind = server_error_kind_of(n.value);
  return is_cluster_redirection(kind) || kind == server_error_kind::read_only;
}

}  // namespace

pipeline::pipeline(const resp::limits& limits) : decoder_(limits) {}

pipeline::~pipeline() { fail_all(errc::shutting_down); }

void pipeline::encode_into(std::string& out, request& r) {
  const std::size_t before = out.size();
  resp::encoder e(out);
  r.awaiting_asking_reply_ = r.route_.asking;
  if (r.route_.asking) e.command("ASKING");
  r.runs_script = false;  // encode() says again whether it writes a script (encode_script_call)
  r.encode(e);
  r.replicas_wanted_ = 0;  // decided when it is written (end_with_wait)
  r.replicas_acked_ = 0;
  r.encoded_size_ = out.size() - before;
}

void pipeline::submit(request& r, std::int64_t deadline_ns) {
  r.send_script_body_ = false;  // every submission starts with EVALSHA; only a NOSCRIPT reply sends the body
  enqueue(r, deadline_ns);
}

void pipeline::enqueue(request& r, std::int64_t deadline_ns) {
  // Held behind a WAIT in flight, it is not written before that WAIT answers: allow for it.
  r.deadline_ns_ = waiting_ ? deadline_ns + wait_allowance_ns() : deadline_ns;
  r.reply_is_noscript_ = false;
  encode_into(out_, r);
  queued_.push_back(r);
}

std::int64_t pipeline::wait_allowance_ns() const noexcept { return replicas_.timeout_ms() * 1'000'000; }

void pipeline::submit_handshake(request& r, std::int64_t deadline_ns) {
  r.send_script_body_ = false;
  r.deadline_ns_ = deadline_ns;
  r.reply_is_noscript_ = false;
  encode_into(handshake_out_, r);
  handshake_queued_.push_back(r);
}

const std::string& pipeline::take_output() {
  writing_buffer_.clear();
  if (!handshake_out_.empty()) {
    writing_buffer_.swap(handshake_out_);
    sent_.splice_back(handshake_queued_);
  } else {
    writing_buffer_.swap(out_);
    if (all_pushes_) {
      unanswered_.splice_back(queued_);
    } else {
      end_with_wait();
      sent_.splice_back(queued_);
    }
  }
  writing_ = true;
  return writing_buffer_;
}

// Replica sync: one WAIT after the write answers for every synced request in it (WAIT counts all the
// connection wrote before it). Each such request's deadline now allows for the WAIT's own wait.
void pipeline::end_with_wait() {
  const std::int32_t wanted = replicas_.wanted();
  if (wanted == 0) return;
  bool any = false;
  std::int64_t deadline = 0;
  for (request* r = queued_.front(); r != nullptr; r = r->next_in_queue_) {
    if (!r->syncs_replicas) continue;
    r->replicas_wanted_ = wanted;
    r->deadline_ns_ += wait_allowance_ns();
    deadline = any ? std::max(deadline, r->deadline_ns_) : r->deadline_ns_;
    any = true;
  }
  if (!any) return;
  resp::encoder(writing_buffer_).command("WAIT", wanted, replicas_.timeout_ms());
  wait_.acked = 0;
  wait_.deadline_ns_ = deadline;  // stuck once every request it answers for is past its deadline
  queued_.push_back(wait_);
  waiting_ = true;
  role_follows_ = replicas_.role_after_wait();
  if (!role_follows_) return;
  // Run right after the WAIT answers: the replicas the master lists then. One that left may have been
  // promoted, and then what the others acknowledged is lost to the new master (replica_roster).
  resp::encoder(writing_buffer_).command("ROLE");
  wait_role_.role.reset();
  wait_role_.deadline_ns_ = deadline;
  queued_.push_back(wait_role_);
}

void pipeline::write_done() {
  writing_ = false;
  request_queue written;
  written.splice_back(unanswered_);
  while (request* r = written.pop_front()) r->on_done({});
}

std::error_code pipeline::on_input(resp::read_buffer& in) {
  interrupted_ = false;
  while (!interrupted_) {
    const resp::parse_result r = decoder_.next(in.unread());
    if (r.what == resp::parse_result::kind::need_more) return {};
    if (r.what == resp::parse_result::kind::error) return r.error;
    in.consume(r.consumed);  // r.node's strings stay valid: consume() moves no bytes
    if (auto ec = route(r.node, r.end_of_reply)) return ec;
  }
  return {};
}

std::error_code pipeline::route(const resp::node& n, bool end_of_reply) {
  if (n.depth == 0) {
    in_push_ = n.type == resp::type::push || (push_ != nullptr && all_pushes_);
  }
  if (in_push_) {
    // A RESP3 push answers no request, even where nobody listens for pushes: then it is dropped.
    if (push_ != nullptr) push_->on_push_node(n, end_of_reply);
    return {};
  }
  request* r = sent_.front();
  if (r == nullptr) return errc::protocol_error;  // a reply nobody asked for: the stream is out of step
  if (r == &wait_ || r == &wait_role_) {
    // The WAIT's answer, whatever it says (an error too: WAIT refused), or the ROLE's after it.
    r->on_node(n);
    if (end_of_reply) {
      sent_.pop_front();
      r->on_done({});
    }
    return {};
  }
  if (r->awaiting_asking_reply_) {
    // The answer to the ASKING written ahead of it (+OK; an error makes the command itself fail).
    if (n.depth != 0 || !end_of_reply) return errc::protocol_error;
    r->awaiting_asking_reply_ = false;
    return {};
  }
  if (redirect_ != nullptr && is_cluster_redirect(n)) {
    // The command did not run on this node: the topology sends it elsewhere (or fails it). A
    // top-level error is a whole reply, so nothing more of it follows. A WAIT written after it
    // answers for the others (or for nobody).
    sent_.pop_front();
    redirect_->on_redirect(*r, n.value);
    return {};
  }
  if (n.depth == 0 && r->runs_script && !r->send_script_body_ && is_noscript(n)) {
    r->reply_is_noscript_ = true;
  }
  if (!r->reply_is_noscript_) {
    if (errors_ != nullptr && n.depth == 0 && resp::is_error(n.type)) errors_->on_error_reply(*r, n.value);
    r->on_node(n);
  }
  if (!end_of_reply) return {};
  if (r->replicas_wanted_ > 0 && !r->reply_is_noscript_) {
    sent_.pop_front();
    synced_.push_back(*r);  // done once the WAIT written after it answers
    return {};
  }
  return complete_front(*r);
}

void pipeline::shared_wait::on_node(const resp::node& n) {
  if (n.depth != 0) return;
  std::int64_t count = 0;
  if (n.type == resp::type::integer && parse_int(n.value, count)) {
    acked = static_cast<std::int32_t>(count);
    p_.replicas_.answered(acked);
  } else {
    // WAIT refused (renamed or disabled on a managed server, or not allowed on a replica): the
    // commands themselves ran. Where sync is required that is no sync; else it is reported as not
    // checked, and this connection stops asking until its next login.
    const bool sync_off = p_.replicas_.refused();
    acked = sync_off ? -1 : 0;
    if (p_.errors_ != nullptr && p_.replicas_.report_refusal()) p_.errors_->on_wait_refused(n.value, sync_off);
  }
}

void pipeline::shared_wait::on_done(std::error_code ec) {
  if (p_.role_follows_) return;  // the ROLE after it completes them (or fails them, if it never answers)
  p_.complete_synced(ec, acked);
}

void pipeline::role_after_wait::on_done(std::error_code ec) {
  if (!ec) p_.replicas_.listed_after_wait(role);
  p_.complete_synced(ec, p_.replicas_.counted(p_.wait_.acked));
}

void pipeline::complete_synced(std::error_code ec, std::int32_t acked) {
  waiting_ = false;
  role_follows_ = false;
  // Callbacks may submit new requests (an undo, a retry): they go in the next write.
  request_queue answered;
  answered.splice_back(synced_);
  while (request* r = answered.pop_front()) {
    if (!ec) r->replicas_acked_ = acked;
    r->on_done(ec);
  }
}

std::error_code pipeline::complete_front(request& req) {
  request* r = &req;
  sent_.pop_front();
  if (r->reply_is_noscript_) {
    // The script did not run: send it again with its body.
    r->send_script_body_ = true;
    enqueue(*r, r->deadline_ns_);
    return {};
  }
  r->on_done({});
  return {};
}

void pipeline::connection_lost(std::error_code sent_error) {
  interrupted_ = true;
  decoder_.reset();
  writing_ = false;
  writing_buffer_.clear();
  in_push_ = false;
  waiting_ = false;
  holding_ = true;
  handshake_out_.clear();
  request_queue handshake;
  handshake.splice_back(handshake_queued_);
  request_queue sent;
  sent.splice_back(sent_);
  sent.splice_back(unanswered_);
  // Callbacks may submit new requests; they join the fresh queues.
  while (request* r = handshake.pop_front()) r->on_done(errc::not_connected);
  while (request* r = sent.pop_front()) r->on_done(sent_error);
}

void pipeline::fail_all(std::error_code ec) {
  connection_lost(ec);
  fail_unsent(ec);
}

void pipeline::fail_unsent(std::error_code ec) {
  out_.clear();
  request_queue queued;
  queued.splice_back(queued_);
  while (request* r = queued.pop_front()) r->on_done(ec);
}

bool pipeline::expire(std::int64_t now_ns, std::error_code unsent_error) {
  // Queued requests are in submission order, their bytes a prefix of out_ in the same order, so
  // expired ones are dropped from the front.
  request_queue expired;
  std::size_t drop = 0;
  while (!queued_.empty() && queued_.front()->deadline_ns_ <= now_ns) {
    request* r = queued_.pop_front();
    drop += r->encoded_size_;
    expired.push_back(*r);
  }
  out_.erase(0, drop);
  while (request* r = expired.pop_front()) r->on_done(unsent_error);
  const request* oldest_sent = sent_.front();
  return oldest_sent != nullptr && oldest_sent->deadline_ns_ <= now_ns;
}

std::int64_t pipeline::next_deadline() const noexcept {
  std::int64_t next = 0;
  for (const request* r : {sent_.front(), queued_.front(), handshake_queued_.front()}) {
    if (r != nullptr && (next == 0 || r->deadline_ns_ < next)) next = r->deadline_ns_;
  }
  return next;
}

}  // namespace deadbolt::detail
