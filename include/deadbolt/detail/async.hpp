// Completion-token plumbing shared by every async operation. The engine is not templated: it reports
// an operation's end through the `completion` interface; a handler_completion wraps the caller's
// handler (allocated with the handler's associated allocator, by default a per-thread block cache,
// so steady-state operations do not touch the heap) and adapts the result to the public signature.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <new>
#include <system_error>
#include <type_traits>
#include <utility>

#include "deadbolt/port/asio_config.hpp"

#include <asio/any_io_executor.hpp>
#include <asio/associated_allocator.hpp>
#include <asio/associated_cancellation_slot.hpp>
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/cancellation_type.hpp>
#include <asio/dispatch.hpp>

#include "deadbolt/detail/block_cache.hpp"

namespace deadbolt::detail {

class client_core;

/// What the engine calls, exactly once, when an operation ends.
template <typename Value>
class basic_completion {
 public:
  virtual void complete(std::error_code ec, Value value) = 0;

 protected:
  ~basic_completion() = default;
};
/// Lock operations report one number (a flag, a count, a TTL, a token).
using completion = basic_completion<std::int64_t>;

/// Names a running operation, for cancellation; stale references are ignored.
struct op_ref {
  void* op = nullptr;
  std::uint64_t generation = 0;
};

/// Cancels the operation if it is still running (it then completes with operation_aborted, after
/// releasing anything it acquired). Must run on the client's executor.
void cancel_operation(client_core& core, op_ref ref);

struct result_void {
  using value_type = std::int64_t;
  using signature = void(std::error_code);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t) { std::move(h)(ec); }
};
struct result_bool {
  using value_type = std::int64_t;
  using signature = void(std::error_code, bool);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t v) { std::move(h)(ec, v != 0); }
};
struct result_int {
  using value_type = std::int64_t;
  using signature = void(std::error_code, std::int64_t);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t v) { std::move(h)(ec, v); }
};
struct result_ms {
  using value_type = std::int64_t;
  using signature = void(std::error_code, std::chrono::milliseconds);
  template <typename H>
  static void call(H& h, std::error_code ec, std::int64_t v) { std::move(h)(ec, std::chrono::milliseconds(v)); }
};

template <typename Handler, typename Result>
class handler_completion final : public basic_completion<typename Result::value_type> {
 public:
  using value_type = typename Result::value_type;

  handler_completion(Handler&& h, const asio::any_io_executor& fallback)
      : handler_(std::move(h)), fallback_(fallback) {}

  void complete(std::error_code ec, value_type value) override {
    asio::get_associated_cancellation_slot(handler_).clear();
    Handler h(std::move(handler_));
    auto ex = asio::get_associated_executor(h, fallback_);
    destroy(this, h);
    // Inline when the handler's executor is the client's own (we are running on it).
    asio::dispatch(ex, [h = std::move(h), ec, value = std::move(value)]() mutable {
      Result::call(h, ec, std::move(value));
    });
  }

  static handler_completion* create(Handler&& h, const asio::any_io_executor& fallback) {
    auto alloc = rebound(h);
    auto* p = std::allocator_traits<decltype(alloc)>::allocate(alloc, 1);
    return new (p) handler_completion(std::move(h), fallback);
  }

  Handler& handler() { return handler_; }

 private:
  static auto rebound(Handler& h) {
    auto base = asio::get_associated_allocator(h, cached_allocator<void>());
    using traits = std::allocator_traits<decltype(base)>;
    return typename traits::template rebind_alloc<handler_completion>(base);
  }
  static void destroy(handler_completion* self, Handler& h) {
    auto alloc = rebound(h);
    self->~handler_completion();
    std::allocator_traits<decltype(alloc)>::deallocate(alloc, self, 1);
  }

  Handler handler_;
  asio::any_io_executor fallback_;
};

/// Cancellation-slot handler: forwards a cancellation request to the engine on its executor.
struct operation_canceller {
  std::shared_ptr<client_core> core;
  asio::any_io_executor executor;
  op_ref ref;
  void operator()(asio::cancellation_type type) const {
    if ((type & (asio::cancellation_type::terminal | asio::cancellation_type::partial |
                 asio::cancellation_type::total)) == asio::cancellation_type::none) {
      return;
    }
    asio::dispatch(executor, [core = core, ref = ref] { cancel_operation(*core, ref); });
  }
};

/// Starts an engine operation for any completion token. `start(core, completion&)` runs on the
/// client's executor and returns the operation's op_ref.
template <typename Result, typename Token, typename Start>
auto async_run(const std::shared_ptr<client_core>& core, const asio::any_io_executor& ex, Token&& token,
               Start&& start) {
  return asio::async_initiate<Token, typename Result::signature>(
      [](auto handler, std::shared_ptr<client_core> core, asio::any_io_executor ex, auto start) {
        using handler_type = std::decay_t<decltype(handler)>;
        using completion_type = handler_completion<handler_type, Result>;
        auto slot = asio::get_associated_cancellation_slot(handler);
        completion_type* c = completion_type::create(std::move(handler), ex);
        asio::dispatch(ex, [core = std::move(core), ex, c, slot, start = std::move(start)]() mutable {
          const op_ref ref = start(*core, *c);
          if (slot.is_connected() && ref.op != nullptr) {
            slot.template emplace<operation_canceller>(operation_canceller{core, ex, ref});
          }
        });
      },
      token, core, ex, std::forward<Start>(start));
}

}  // namespace deadbolt::detail
