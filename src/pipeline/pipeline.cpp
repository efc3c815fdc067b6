#include "pipeline/pipeline.hpp"

#include "deadbolt/error.hpp"

namespace deadbolt::detail {
namespace {

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
  r.pipe_.asking.encode(e, r.route_.asking);
  r.runs_script = false;  // encode() says again whether it writes a script (begin_script)
  r.encode(e);
  r.pipe_.script.encoded();
  r.pipe_.replicas_wanted = 0;  // decided when it is written (replica_wait::end_write)
  r.pipe_.replicas_acked = 0;
  r.pipe_.encoded_size = out.size() - before;
}

void pipeline::submit(request& r, std::int64_t deadline_ns) {
  r.pipe_.script.submitted();
  enqueue(r, deadline_ns);
}

void pipeline::enqueue(request& r, std::int64_t deadline_ns) {
  // Held behind a WAIT in flight, it is not written before that WAIT answers: allow for it.
  r.pipe_.deadline_ns = wait_.in_flight() ? deadline_ns + wait_.allowance_ns() : deadline_ns;
  encode_into(out_, r);
  queued_.push_back(r);
}

void pipeline::submit_handshake(request& r, std::int64_t deadline_ns) {
  r.pipe_.script.submitted();
  r.pipe_.deadline_ns = deadline_ns;
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
      wait_.end_write(queued_, writing_buffer_);
      sent_.splice_back(queued_);
    }
  }
  writing_ = true;
  return writing_buffer_;
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
  if (wait_.owns(r)) {
    // The WAIT's answer, whatever it says (an error too: WAIT refused), or the ROLE's after it.
    r->on_node(n);
    if (end_of_reply) {
      sent_.pop_front();
      r->on_done({});
    }
    return {};
  }
  std::error_code out_of_step;
  if (r->pipe_.asking.takes(n, end_of_reply, out_of_step)) return out_of_step;
  if (redirect_ != nullptr && is_cluster_redirect(n)) {
    // The command did not run on this node: the topology sends it elsewhere (or fails it). A
    // top-level error is a whole reply, so nothing more of it follows. A WAIT written after it
    // answers for the others (or for nobody).
    sent_.pop_front();
    redirect_->on_redirect(*r, n.value);
    return {};
  }
  if (!r->pipe_.script.swallows(n, r->runs_script)) {
    if (errors_ != nullptr && n.depth == 0 && resp::is_error(n.type)) errors_->on_error_reply(*r, n.value);
    r->on_node(n);
  }
  if (!end_of_reply) return {};
  sent_.pop_front();
  if (r->pipe_.script.resend_with_body()) {
    enqueue(*r, r->pipe_.deadline_ns);  // the script did not run: it goes again, with its body
  } else if (!wait_.holds_until_answered(*r)) {
    r->on_done({});
  }
  return {};
}

void pipeline::connection_lost(std::error_code sent_error) {
  interrupted_ = true;
  decoder_.reset();
  writing_ = false;
  writing_buffer_.clear();
  in_push_ = false;
  wait_.connection_lost();
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
  while (!queued_.empty() && queued_.front()->pipe_.deadline_ns <= now_ns) {
    request* r = queued_.pop_front();
    drop += r->pipe_.encoded_size;
    expired.push_back(*r);
  }
  out_.erase(0, drop);
  while (request* r = expired.pop_front()) r->on_done(unsent_error);
  const request* oldest_sent = sent_.front();
  return oldest_sent != nullptr && oldest_sent->pipe_.deadline_ns <= now_ns;
}

std::int64_t pipeline::next_deadline() const noexcept {
  std::int64_t next = 0;
  for (const request* r : {sent_.front(), queued_.front(), handshake_queued_.front()}) {
    if (r != nullptr && (next == 0 || r->pipe_.deadline_ns < next)) next = r->pipe_.deadline_ns;
  }
  return next;
}

}  // namespace deadbolt::detail
