// How the composite locks reach into a member lock object: its client (for PEXPIRE, the watchdog
// lease and the client id) and, for the blocking API, the async lock behind a blocking_lock.
#pragma once

#include <memory>

#include "deadbolt/blocking.hpp"
#include "deadbolt/reentrant_lock.hpp"

namespace deadbolt::detail {

struct lock_access {
  static const std::shared_ptr<client_core>& core(const lock_base& l) { return l.core_; }
  static const std::shared_ptr<const lock_names>& names(const lock_base& l) { return l.names_; }
  static reentrant_lock async_lock_of(const blocking_lock_base& b) {
    return reentrant_lock(b.core_, b.executor_, b.names_->name);
  }
};

}  // namespace deadbolt::detail
