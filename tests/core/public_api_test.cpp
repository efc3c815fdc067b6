// What the public headers promise about themselves: handles are made by a client, never from the
// engine's internals by users (their constructors are private).
#include <doctest/doctest.h>

#include <memory>
#include <string_view>
#include <type_traits>

#include "deadbolt/deadbolt.hpp"

namespace {

template <typename Handle>
constexpr bool made_from_internals =
    std::is_constructible_v<Handle, std::shared_ptr<deadbolt::detail::client_core>, asio::any_io_executor,
                            std::string_view>;

}  // namespace

TEST_CASE("handles cannot be constructed from the engine's internals, only copied from what a client made") {
  CHECK_FALSE(made_from_internals<deadbolt::reentrant_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::fenced_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::fair_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::read_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::write_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::read_write_lock>);
  CHECK_FALSE(made_from_internals<deadbolt::semaphore>);
  CHECK_FALSE(made_from_internals<deadbolt::expirable_semaphore>);
  CHECK_FALSE(made_from_internals<deadbolt::count_down_latch>);
  CHECK_FALSE((std::is_constructible_v<deadbolt::spin_lock, std::shared_ptr<deadbolt::detail::client_core>,
                                       asio::any_io_executor, std::string_view, deadbolt::spin_backoff>));
  CHECK_FALSE(made_from_internals<deadbolt::blocking_lock>);
  CHECK(std::is_copy_constructible_v<deadbolt::reentrant_lock>);
  CHECK(std::is_copy_constructible_v<deadbolt::semaphore>);
}
