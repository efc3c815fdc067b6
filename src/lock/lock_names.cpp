// A lock's names (docs/protocol.md §0): its key, channel, latch prefix, token key, and the fair and
// read/write kinds' keys, made once when the lock is made and shared by its operations.
#include "base/keys.hpp"
#include "lock/lock_protocol.hpp"

namespace deadbolt::detail {

std::shared_ptr<const lock_names> make_lock_names(std::string_view name, lock_kind kind, const lock_protocol& protocol,
                                                  const spin_backoff& backoff) {
  auto names = std::make_shared<lock_names>();
  names->kind = kind;
  names->protocol = &protocol;
  names->backoff = backoff;
  names->name = std::string(name);
  names->channel = lock_channel(name);
  names->latch_prefix = unlock_latch_prefix(name);
  names->token_key = prefix_name("redisson_lock_token", name);
  if (kind == lock_kind::fair) {
    names->queue = prefix_name("redisson_lock_queue", name);
    names->timeouts = prefix_name("redisson_lock_timeout", name);
  }
  if (kind == lock_kind::read || kind == lock_kind::write) {
    names->channel = prefix_name("redisson_rwlock", name);
    names->key_prefix = name.find('{') != std::string_view::npos ? std::string(name) : "{" + std::string(name) + "}";
  }
  return names;
}

}  // namespace deadbolt::detail
