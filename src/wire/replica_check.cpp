#include "wire/replica_check.hpp"

#include <utility>

namespace deadbolt::detail {

replica_check::replica_check(asio::any_io_executor ex, const endpoint& ep, const config& cfg, connection& master,
                             replica_check_listener& listener)
    : executor_(std::move(ex)), endpoint_(ep), config_(cfg), master_(master), listener_(listener) {
  endpoint_.kind = endpoint::transport::tcp;
  endpoint_.sentinels.clear();
  endpoint_.sentinel_master.clear();
  endpoint_.cluster_seeds.clear();
  config_.replica_sync = replica_sync_mode::off;
  config_.log = nullptr;
  config_.metrics = nullptr;
}

std::unique_ptr<replica_question> make_replica_check(asio::any_io_executor ex, const endpoint& ep, const config& cfg,
                                                     connection& master, replica_check_listener& listener) {
  return std::make_unique<replica_check>(std::move(ex), ep, cfg, master, listener);
}

replica_check::~replica_check() {
  *alive_ = false;
  stop();
}

void replica_check::ask(const replica_roster::member& m) {
  stop();
  host_ = m.host;
  port_ = m.port;
  history_ = m.expected_only;
  endpoint ep = endpoint_;
  ep.host = m.host;
  ep.port = m.port;
  conn_ = std::make_shared<connection>(executor_, ep, config_, connection::role::command);
  conn_->set_listener(this);
  conn_->start();
  busy_ = true;
  theirs_.prepare(history_);
  conn_->submit(theirs_);
  if (!history_) return;
  ours_.prepare(true);
  if (!ours_.queued) {  // else the one still queued from an earlier question answers this one
    ours_.queued = true;
    master_.submit(ours_);
  }
}

void replica_check::stop() noexcept {
  ++generation_;
  busy_ = false;
  theirs_.waited = ours_.waited = false;
  close();
}

void replica_check::question::prepare(bool history) {
  history_ = history;
  waited = true;
  failed = false;
  role.reset();
  info = replication_info{};
}

void replica_check::question::encode(resp::encoder& e) {
  if (history_) e.command("INFO", "replication");
  else e.command("ROLE");
}

void replica_check::question::on_node(const resp::node& n) {
  if (!history_) return role.take(n);
  if (n.depth == 0 && !resp::is_error(n.type)) info = parse_replication_info(n.value);
}

void replica_check::question::on_done(std::error_code ec) {
  queued = false;
  if (!waited) return;
  waited = false;
  failed = static_cast<bool>(ec);
  check_.answer_in(ec);
}

void replica_check::on_connect_failed(std::error_code ec) {
  if (!theirs_.waited) return;
  theirs_.waited = false;
  theirs_.failed = true;
  answer_in(ec);
}

void replica_check::close() noexcept {
  if (!conn_) return;
  conn_->set_listener(nullptr);
  conn_->stop();  // fails the question if it is still queued: no longer waited for, so ignored
  conn_.reset();
}

void replica_check::answer_in(std::error_code ec) {
  if (ec) error_ = ec;
  if (theirs_.waited || ours_.waited) return;
  const bool master = history_ ? !theirs_.failed && !ours_.failed && promoted_from(theirs_.info, ours_.info)
                               : !theirs_.failed && !theirs_.role.error() && theirs_.role.master();
  const std::error_code why = theirs_.failed ? error_ : std::error_code();
  error_ = {};
  // Not from inside the asked connection's own callbacks: it is closed here.
  asio::post(executor_, [this, why, master, gen = generation_, alive = std::weak_ptr<bool>(alive_)] {
    if (alive.expired() || gen != generation_) return;
    busy_ = false;
    close();
    listener_.replica_answered(host_, port_, master, why);
  });
}

}  // namespace deadbolt::detail
