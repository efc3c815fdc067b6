#include "pipeline/replica_wait.hpp"

#include <algorithm>

#include "pipeline/script_call.hpp"

namespace deadbolt::detail {

// One WAIT after the write answers for every synced request in it (WAIT counts all the connection
// wrote before it). Each such request's deadline now allows for the WAIT's own wait.
void replica_wait::end_write_synced(request_queue& queued, std::string& out, std::int32_t wanted) {
  bool any = false;
  std::int64_t deadline = 0;
  for (request* r = queued.front(); r != nullptr; r = r->pipe_.next_in_queue) {
    if (!r->syncs_replicas) continue;
    r->pipe_.replicas_wanted = wanted;
    r->pipe_.deadline_ns += allowance_ns();
    deadline = any ? std::max(deadline, r->pipe_.deadline_ns) : r->pipe_.deadline_ns;
    any = true;
  }
  if (!any) return;
  resp::encoder(out).command("WAIT", wanted, sync_.timeout_ms());
  wait_.acked = 0;
  wait_.pipe_.deadline_ns = deadline;  // stuck once every request it answers for is past its deadline
  queued.push_back(wait_);
  waiting_ = true;
  role_follows_ = sync_.role_after_wait();
  if (!role_follows_) return;
  // Run right after the WAIT answers: the replicas the master lists then. One that left may have been
  // promoted, and then what the others acknowledged is lost to the new master (replica_roster).
  resp::encoder(out).command("ROLE");
  wait_role_.role.reset();
  wait_role_.pipe_.deadline_ns = deadline;
  queued.push_back(wait_role_);
}

void replica_wait::shared_wait::on_node(const resp::node& n) {
  if (n.depth != 0) return;
  std::int64_t count = 0;
  if (n.type == resp::type::integer && parse_int(n.value, count)) {
    acked = static_cast<std::int32_t>(count);
    w_.sync_.answered(acked);
  } else {
    // WAIT refused (renamed or disabled on a managed server, or not allowed on a replica): the
    // commands themselves ran. Where sync is required that is no sync; else it is reported as not
    // checked, and this connection stops asking until its next login.
    const bool sync_off = w_.sync_.refused();
    acked = sync_off ? -1 : 0;
    if (w_.errors_ != nullptr && w_.sync_.report_refusal()) w_.errors_->on_wait_refused(n.value, sync_off);
  }
}

void replica_wait::shared_wait::on_done(std::error_code ec) {
  if (w_.role_follows_) return;  // the ROLE after it completes them (or fails them, if it never answers)
  w_.complete_synced(ec, acked);
}

void replica_wait::role_after_wait::on_done(std::error_code ec) {
  if (!ec) w_.sync_.listed_after_wait(role);
  w_.complete_synced(ec, w_.sync_.counted(w_.wait_.acked));
}

void replica_wait::complete_synced(std::error_code ec, std::int32_t acked) {
  waiting_ = false;
  role_follows_ = false;
  // Callbacks may submit new requests (an undo, a retry): they go in the next write.
  request_queue answered;
  answered.splice_back(synced_);
  while (request* r = answered.pop_front()) {
    if (!ec) r->pipe_.replicas_acked = acked;
    r->on_done(ec);
  }
}

}  // namespace deadbolt::detail
