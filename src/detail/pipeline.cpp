#include "detail/pipeline.hpp"

#include <algorithm>

#include "deadbolt/error.hpp"
#include "detail/script_call.hpp"

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
  r.awaiting_asking_reply = r.asking;
  if (r.asking) e.command("ASKING");
  r.encode(e);
  r.replicas_wanted = r.syncs_replicas ? replicas_.wanted() : 0;
  r.replicas_acked = 0;
  r.awaiting_wait_reply = false;
  if (r.replicas_wanted > 0) e.command("WAIT", r.replicas_wanted, replicas_.timeout_ms());
  r.encoded_size = out.size() - before;
}

void pipeline::submit(request& r, std::int64_t deadline_ns) {
  r.deadline_ns = deadline_ns;
  r.reply_is_noscript = false;
  encode_into(out_, r);
  if (r.replicas_wanted > 0) r.deadline_ns += wait_allowance_ns();
  queued_.push_back(r);
}

std::int64_t pipeline::wait_allowance_ns() const noexcept { return replicas_.timeout_ms() * 1'000'000; }

void pipeline::submit_handshake(request& r, std::int64_t deadline_ns) {
  r.deadline_ns = deadline_ns;
  r.reply_is_noscript = false;
  encode_into(handshake_out_, r);
  handshake_queued_.push_back(r);
}

void pipeline::end_handshake() {
  holding_ = false;
  bool stale = false;
  for (const request* r = queued_.front(); r != nullptr && !stale; r = r->next_in_queue) {
    stale = r->syncs_replicas && r->replicas_wanted != replicas_.wanted();
  }
  if (!stale) return;
  out_.clear();
  for (request* r = queued_.front(); r != nullptr; r = r->next_in_queue) {
    const bool waited = r->replicas_wanted > 0;
    encode_into(out_, *r);
    if (!waited && r->replicas_wanted > 0) r->deadline_ns += wait_allowance_ns();  // WAIT's own wait
  }
}

const std::string& pipeline::take_output() {
  writing_buffer_.clear();
  if (!handshake_out_.empty()) {
    writing_buffer_.swap(handshake_out_);
    sent_.splice_back(handshake_queued_);
  } else {
    writing_buffer_.swap(out_);
    (all_pushes_ ? unanswered_ : sent_).splice_back(queued_);
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
  if (skip_replies_ > 0) {
    // The WAIT written after a request that was redirected at its first reply: nobody's any more.
    if (end_of_reply) --skip_replies_;
    return {};
  }
  request* r = sent_.front();
  if (r == nullptr) return errc::protocol_error;  // a reply nobody asked for: the stream is out of step
  if (r->awaiting_wait_reply) return take_wait_reply(*r, n, end_of_reply);
  if (r->awaiting_asking_reply) {
    // The answer to the ASKING written ahead of it (+OK; an error makes the command itself fail).
    if (n.depth != 0 || !end_of_reply) return errc::protocol_error;
    r->awaiting_asking_reply = false;
    return {};
  }
  if (redirect_ != nullptr && is_cluster_redirect(n)) {
    // The command did not run on this node: the topology sends it elsewhere (or fails it). A
    // top-level error is a whole reply, so nothing more of it follows.
    sent_.pop_front();
    if (r->replicas_wanted > 0) ++skip_replies_;
    redirect_->on_redirect(*r, n.value);
    return {};
  }
  if (n.depth == 0 && r->runs_script && !r->send_script_body && is_noscript(n)) {
    r->reply_is_noscript = true;
  }
  if (!r->reply_is_noscript) {
    if (errors_ != nullptr && n.depth == 0 && resp::is_error(n.type)) errors_->on_error_reply(*r, n.value);
    r->on_node(n);
  }
  if (!end_of_reply) return {};
  if (r->replicas_wanted > 0) {
    r->awaiting_wait_reply = true;  // the WAIT written after it answers next
    return {};
  }
  return complete_front(*r);
}

std::error_code pipeline::take_wait_reply(request& r, const resp::node& n, bool end_of_reply) {
  if (n.depth == 0) {
    std::int64_t acked = 0;
    if (n.type == resp::type::integer && parse_int(n.value, acked)) {
      r.replicas_acked = static_cast<std::int32_t>(acked);
      replicas_.answered(r.replicas_acked);
    } else {
      // WAIT refused (renamed or disabled on a managed server, or not allowed on a replica): the
      // command itself ran. Where sync is required that is no sync; else it is reported as not
      // checked, and this connection stops asking until its next login.
      r.replicas_acked = replicas_.refused() ? -1 : 0;
    }
  }
  if (!end_of_reply) return {};
  r.awaiting_wait_reply = false;
  return complete_front(r);
}

std::error_code pipeline::complete_front(request& req) {
  request* r = &req;
  sent_.pop_front();
  if (r->reply_is_noscript) {
    // The script did not run: send it again with its body.
    r->send_script_body = true;
    submit(*r, r->deadline_ns);
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
  skip_replies_ = 0;
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
  while (!queued_.empty() && queued_.front()->deadline_ns <= now_ns) {
    request* r = queued_.pop_front();
    drop += r->encoded_size;
    expired.push_back(*r);
  }
  out_.erase(0, drop);
  while (request* r = expired.pop_front()) r->on_done(unsent_error);
  const request* oldest_sent = sent_.front();
  return oldest_sent != nullptr && oldest_sent->deadline_ns <= now_ns;
}

std::int64_t pipeline::next_deadline() const noexcept {
  std::int64_t next = 0;
  for (const request* r : {sent_.front(), queued_.front(), handshake_queued_.front()}) {
    if (r != nullptr && (next == 0 || r->deadline_ns < next)) next = r->deadline_ns;
  }
  return next;
}

}  // namespace deadbolt::detail
