// The lease deadlines the history records for a hold: a lower bound of when the server may expire it.
// Every hold starts with invoke + lease (the grant comes after the invoke). A library that says how
// long it still counts on a hold (valid_for, deadbolt after 74dc84a) gives a later one after each
// renewal: the moment asked + what is left. An older library has no such call: only the first bound.
#pragma once
#include <chrono>
#include <cstdint>
#include <system_error>
#include <type_traits>
#include <utility>

namespace verify {

template <typename Lock, typename = void>
struct has_valid_for : std::false_type {};
template <typename Lock>
struct has_valid_for<Lock, std::void_t<decltype(std::declval<Lock&>().valid_for())>> : std::true_type {};

struct valid_for_handler {
  void operator()(std::error_code, std::chrono::milliseconds) const {}
};
template <typename Lock, typename = void>
struct has_async_valid_for : std::false_type {};
template <typename Lock>
struct has_async_valid_for<Lock, std::void_t<decltype(std::declval<Lock&>().async_valid_for(
                                     std::int64_t{}, valid_for_handler{}))>>
    : std::true_type {};

/// The calling thread's hold of a blocking lock: the lower bound, or 0 when unknown or lost.
template <typename Lock>
std::int64_t blocking_lease_deadline(Lock& lock, std::int64_t asked_ns) {
  if constexpr (has_valid_for<Lock>::value) {
    const auto left = lock.valid_for();
    return left.count() > 0 ? asked_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(left).count() : 0;
  } else {
    (void)lock;
    (void)asked_ns;
    return 0;
  }
}

/// `owner`'s hold of an async lock: calls `done(deadline)` (0 when unknown or lost).
template <typename Lock, typename Done>
void async_lease_deadline(Lock& lock, std::int64_t owner, std::int64_t asked_ns, Done done) {
  if constexpr (has_async_valid_for<Lock>::value) {
    lock.async_valid_for(owner, [asked_ns, done = std::move(done)](std::error_code ec, std::chrono::milliseconds left) mutable {
      done(!ec && left.count() > 0 ? asked_ns + std::chrono::duration_cast<std::chrono::nanoseconds>(left).count() : 0);
    });
  } else {
    (void)lock;
    (void)owner;
    (void)asked_ns;
    done(std::int64_t{0});
  }
}

}  // namespace verify
