// A kind's protocol chosen at run time (tests; the library names it when a lock is made, through
// protocol_for<Kind>()). Apart from the protocols, so that referring to one kind does not link them all.
#include "lock/lock_protocol.hpp"

namespace deadbolt::detail {

const lock_protocol& protocol_of(lock_kind kind) {
  switch (kind) {
    case lock_kind::fenced: return fenced_protocol();
    case lock_kind::spin: return spin_protocol();
    case lock_kind::fair: return fair_protocol();
    case lock_kind::read: return read_protocol();
    case lock_kind::write: return write_protocol();
    case lock_kind::reentrant: break;
  }
  return reentrant_protocol();
}

std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind, const spin_backoff& backoff) {
  return make_lock_names(name, kind, protocol_of(kind), backoff);
}

}  // namespace deadbolt::detail
