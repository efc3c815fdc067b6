// The blocking facade's one completion token. A blocking call is the async operation run with it:
//
//   std::error_code ec;
//   bool got = async_lock.async_try_lock(owner, wait, lease, blocking_token(gate, ec));
//
// With the gates of the clients involved held (src/blocking/blocking_gate.hpp: errc::would_deadlock on a
// loop's own thread, errc::shutting_down once a blocking_client is gone, and then nothing starts), the
// call posts the operation's initiation to a client's loop, where it starts; its handler stores the
// result and wakes the caller, who waits on its own stack. The value is returned, the error code goes
// to `ec`.
//
// What the caller's thread would allocate the loop's thread would free, which no per-thread cache can
// recycle: so the posted initiation and the completion object the engine makes for the handler
// (handler_completion, include/deadbolt/detail/async.hpp) live in slots inside the waiter (their
// associated allocator), and a blocking call costs no heap. Started on the loop, the operation's own
// allocations are the loop thread's, recycled there as an async call's are.
#pragma once

#include <cstddef>
#include <system_error>
#include <type_traits>
#include <utility>

#include "deadbolt/port/asio_config.hpp"
#include "deadbolt/port/hooks.hpp"

#include <asio/async_result.hpp>
#include <asio/post.hpp>

#include "blocking/blocking_gate.hpp"
#include "blocking/blocking_slot.hpp"

namespace deadbolt::detail {

class blocking_token {
 public:
  /// A call through one client.
  blocking_token(blocking_gate& gate, std::error_code& ec) noexcept : one_(&gate), n_(1), ec_(ec) {}
  /// A call through several clients (a composite's members): their gates in address order, no
  /// duplicates. None (a composite without members): the operation starts on the calling thread.
  blocking_token(blocking_gate* const* gates, std::size_t n, std::error_code& ec) noexcept
      : many_(gates), n_(n), ec_(ec) {}

  template <typename Start>
  std::error_code enter(Start&& start) const {
    return through_gates(gates(), n_, std::forward<Start>(start));
  }
  /// Where the operation starts: the first client's loop (only while the gates are held), or none.
  const asio::io_context::executor_type* loop() const noexcept { return n_ == 0 ? nullptr : &gates()[0]->loop; }
  std::error_code& ec() const noexcept { return ec_; }

 private:
  blocking_gate* const* gates() const noexcept { return many_ != nullptr ? many_ : &one_; }

  blocking_gate* one_ = nullptr;
  blocking_gate* const* many_ = nullptr;
  std::size_t n_ = 0;
  std::error_code& ec_;
};

/// What a signature without a value leaves in the waiter.
struct no_value {};

/// The calling thread waits here; the handler (on a loop thread) fills it in.
template <typename Value>
class blocking_waiter {
 public:
  void set(std::error_code ec, Value v) {
    ec_ = ec;
    value_ = std::move(v);
    done_.post();  // the last touch: the waiter (and this object) may go as soon as wait() returns
  }
  Value wait(std::error_code& ec) {
    done_.wait();
    ec = ec_;
    return std::move(value_);
  }
  blocking_slot& slot() noexcept { return slot_; }

 private:
  port::thread_signal done_;
  std::error_code ec_;
  Value value_{};
  blocking_slot slot_;
};

/// The initiation, posted to the loop; its memory is a slot of the waiter.
template <typename Start>
class blocking_start {
 public:
  using allocator_type = blocking_slot_allocator<void>;

  blocking_start(Start& start, blocking_slot& slot) noexcept : start_(&start), slot_(&slot) {}
  allocator_type get_allocator() const noexcept { return allocator_type(*slot_); }
  void operator()() { (*start_)(); }

 private:
  Start* start_;  // on the caller's stack, which waits until the operation has completed
  blocking_slot* slot_;
};

template <typename Value>
class blocking_handler {
 public:
  using allocator_type = blocking_slot_allocator<void>;

  explicit blocking_handler(blocking_waiter<Value>& w) noexcept : waiter_(&w) {}
  allocator_type get_allocator() const noexcept { return allocator_type(waiter_->slot()); }

  void operator()(std::error_code ec) { waiter_->set(ec, Value{}); }
  template <typename Arg>
  void operator()(std::error_code ec, Arg&& value) {
    waiter_->set(ec, Value(std::forward<Arg>(value)));
  }

 private:
  blocking_waiter<Value>* waiter_;
};

template <typename... Args>
struct blocking_value {
  using type = no_value;
  using returned = void;
};
template <typename Arg>
struct blocking_value<Arg> {
  using type = std::decay_t<Arg>;
  using returned = type;
};

}  // namespace deadbolt::detail

namespace asio {

template <typename... Args>
class async_result<deadbolt::detail::blocking_token, void(std::error_code, Args...)> {
  using value = typename deadbolt::detail::blocking_value<Args...>::type;

 public:
  using return_type = typename deadbolt::detail::blocking_value<Args...>::returned;

  template <typename Initiation, typename Token, typename... InitArgs>
  static return_type initiate(Initiation&& initiation, Token&& token, InitArgs&&... args) {
    deadbolt::detail::blocking_waiter<value> waiter;
    std::error_code& ec = token.ec();
    auto start = [&] {
      std::move(initiation)(deadbolt::detail::blocking_handler<value>(waiter), std::forward<InitArgs>(args)...);
    };
    ec = token.enter([&] {
      if (const auto* loop = token.loop()) {
        asio::post(*loop, deadbolt::detail::blocking_start<decltype(start)>(start, waiter.slot()));
      } else {
        start();
      }
    });
    if constexpr (std::is_void_v<return_type>) {
      if (!ec) waiter.wait(ec);
    } else {
      if (ec) return return_type{};
      return waiter.wait(ec);
    }
  }
};

}  // namespace asio
