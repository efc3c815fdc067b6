// The blocking client's factories of the fair, read-write and fenced locks, in a file of their own: a
// program that uses only blocking_client::lock() does not link those kinds' protocols (see
// blocking_client_loop.hpp). The semaphores' and latch's are in blocking_sync.cpp.
#include "blocking/blocking_client_loop.hpp"

namespace deadbolt {

blocking_fair_lock blocking_client::fair_lock(std::string_view name) {
  return {loop_->async->fair_lock(name), loop_->gate};
}

blocking_read_write_lock blocking_client::read_write_lock(std::string_view name) {
  return {loop_->async->read_write_lock(name), loop_->gate};
}

blocking_fenced_lock blocking_client::fenced_lock(std::string_view name) {
  return {loop_->async->fenced_lock(name), loop_->gate};
}

}  // namespace deadbolt
