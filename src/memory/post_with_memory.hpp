// Posting a handler that owns a handler_memory. Through an any_io_executor, asio::post ignores the
// handler's allocator: the type-erased executor wraps it with std::allocator, in Asio's per-thread
// cache of two blocks, which several posts pending at once outgrow (a red lock's release starts a
// posted flush on each member's connection in one turn: 1.5 heap allocations per pair). On an
// io_context's own executor the handler's memory is used.
#pragma once

#include <utility>

#include "deadbolt/port/asio_config.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/bind_allocator.hpp>
#include <asio/io_context.hpp>
#include <asio/post.hpp>

#include "memory/handler_memory.hpp"

namespace deadbolt::detail {

template <typename Handler>
void post_with_memory(const asio::any_io_executor& ex, handler_memory& memory, Handler&& handler) {
  auto bound = asio::bind_allocator(handler_allocator<char>(memory), std::forward<Handler>(handler));
  if (const auto* io = ex.target<asio::io_context::executor_type>()) {
    asio::post(*io, std::move(bound));
  } else {
    asio::post(ex, std::move(bound));  // a strand, a thread pool, a work-tracking executor: Asio's cache
  }
}

}  // namespace deadbolt::detail
