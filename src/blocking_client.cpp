// The blocking client: an async client whose io_context runs on a thread of its own, and the gate its
// blocking handles pass (src/detail/blocking_gate.hpp). Its own calls are the client's async ones
// with the blocking token.
#include "deadbolt/blocking.hpp"

#include <thread>
#include <utility>

#include "deadbolt/client.hpp"
#include "deadbolt/port/asio.hpp"
#include "detail/blocking_call.hpp"

namespace deadbolt {

struct blocking_client::loop {
  // Shared with the engine: handles that outlive the client still hold executors and strands of this
  // io_context, which must outlive them (it no longer runs).
  std::shared_ptr<asio::io_context> io = std::make_shared<asio::io_context>(1);
  asio::executor_work_guard<asio::io_context::executor_type> work = asio::make_work_guard(*io);
  std::unique_ptr<deadbolt::client> async;
  std::shared_ptr<detail::blocking_gate> gate = std::make_shared<detail::blocking_gate>(io->get_executor());
  std::thread thread;

  explicit loop(const config& cfg) : async(new deadbolt::client(io->get_executor(), cfg, io)) {
    thread = std::thread([this] { io->run(); });
    gate->loop_thread = thread.get_id();
  }
  ~loop() {
    detail::close_gate(*gate);  // handles that outlive the client fail from now on
    async.reset();              // posts the shutdown, which the loop runs before it returns
    work.reset();
    thread.join();
  }
};

blocking_client::blocking_client(const config& cfg) : loop_(std::make_unique<loop>(cfg)) {}
blocking_client::~blocking_client() = default;

std::error_code blocking_client::config_error() const { return loop_->async->config_error(); }
const std::string& blocking_client::id() const { return loop_->async->id(); }

std::error_code blocking_client::connect() {
  std::error_code ec;
  loop_->async->async_connect(detail::through(loop_->gate, ec));
  return ec;
}

object_info blocking_client::inspect(std::string_view name, std::error_code& ec) {
  return loop_->async->async_inspect(name, detail::through(loop_->gate, ec));
}

object_info blocking_client::inspect(std::string_view name) {
  return detail::or_raise("inspect", std::string(name), [&](std::error_code& ec) { return inspect(name, ec); });
}

blocking_lock blocking_client::lock(std::string_view name) { return {loop_->async->lock(name), loop_->gate}; }

blocking_fair_lock blocking_client::fair_lock(std::string_view name) {
  return {loop_->async->fair_lock(name), loop_->gate};
}

blocking_read_write_lock blocking_client::read_write_lock(std::string_view name) {
  return {loop_->async->read_write_lock(name), loop_->gate};
}

blocking_fenced_lock blocking_client::fenced_lock(std::string_view name) {
  return {loop_->async->fenced_lock(name), loop_->gate};
}

blocking_semaphore blocking_client::semaphore(std::string_view name) {
  return {loop_->async->semaphore(name), loop_->gate};
}

blocking_expirable_semaphore blocking_client::expirable_semaphore(std::string_view name) {
  return {loop_->async->expirable_semaphore(name), loop_->gate};
}

blocking_count_down_latch blocking_client::count_down_latch(std::string_view name) {
  return {loop_->async->count_down_latch(name), loop_->gate};
}

void blocking_client::on_lease_lost(lease_lost_handler handler) { loop_->async->on_lease_lost(std::move(handler)); }

}  // namespace deadbolt
