#include "lock/acquire_reply.hpp"

#include "deadbolt/error.hpp"

namespace deadbolt::detail {

void acquire_reply::reset(bool with_token) {
  reply_.reset();
  with_token_ = with_token;
  items_ = 0;
  count_ = 0;
  token_ = 0;
}

void acquire_reply::take(const resp::node& n) {
  if (n.depth == 0) {
    if (n.type == resp::type::null) {
      reply_.what = scalar_reply::kind::unexpected;
      return;
    }
    if (n.type != resp::type::array) return reply_.take(n);
    // Kept as nil + the items: nil never comes from our scripts.
    reply_.what = n.size == (with_token_ ? 2u : 1u) ? scalar_reply::kind::nil : scalar_reply::kind::unexpected;
    return;
  }
  std::int64_t v = 0;
  if (n.depth != 1 || n.type != resp::type::integer || !parse_int(n.value, v) || v < 1) {
    reply_.what = scalar_reply::kind::unexpected;
    return;
  }
  (items_++ == 0 ? count_ : token_) = v;
}

wait_outcome acquire_reply::outcome(const lock_protocol& p, const lock_names& n, backoff_state& b) const {
  switch (reply_.what) {
    case scalar_reply::kind::nil: return wait_outcome::acquired(with_token_ ? token_ : 1);
    case scalar_reply::kind::integer: return p.busy(reply_.value, n, b);
    case scalar_reply::kind::error: return wait_outcome::failed(reply_.error);
    default: return wait_outcome::failed(errc::protocol_error);
  }
}

}  // namespace deadbolt::detail
