// The blocking client's loop: an async client whose io_context runs on a thread of its own, and the
// gate its blocking handles pass (src/blocking/blocking_gate.hpp). Shared by the files that define
// blocking_client's members: lock() is in blocking_client.cpp, the other kinds' factories in
// blocking_client_kinds.cpp and blocking_sync.cpp, inspect() in blocking_client_inspect.cpp. Apart, so
// that a static program links only the kinds it uses: every object file linked keeps its static
// initializer (Asio's, about 0.6 KB) even when --gc-sections drops all of its functions.
#pragma once

#include <memory>
#include <thread>
#include <utility>

#include "blocking/blocking_gate.hpp"
#include "deadbolt/blocking.hpp"
#include "deadbolt/client.hpp"
#include "deadbolt/port/asio_core.hpp"

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

}  // namespace deadbolt
