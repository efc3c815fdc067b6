// Redisson's read/write lock (RReadWriteLock), wire-compatible: many readers or one writer.
#pragma once

#include <memory>
#include <string_view>
#include <utility>

#include "deadbolt/reentrant_lock.hpp"

namespace deadbolt {

/// The shared half: any number of owners may hold it at once, unless a writer holds the write lock.
/// Each read hold has its own lease (a timeout key), and the watchdog renews only this client's.
/// Operations and leases as reentrant_lock; async_is_locked answers for reads.
class read_lock : public detail::flag_lock<detail::lock_kind::read> {
 public:
  using flag_lock::flag_lock;
};

/// The exclusive half: one owner, and no readers but the writer itself (which may also take reads:
/// releasing the write then leaves it a reader — a downgrade). A reader cannot upgrade: taking the
/// write lock while holding a read waits for itself. Operations and leases as reentrant_lock.
class write_lock : public detail::flag_lock<detail::lock_kind::write> {
 public:
  using flag_lock::flag_lock;
};

/// A read/write lock (docs/protocol.md §4): both halves share the hash `name` and the channel
/// redisson_rwlock:{name}. There is no writer preference (as in Redisson): a steady stream of readers
/// can keep a writer waiting.
class read_write_lock {
 public:
  read_write_lock(std::shared_ptr<detail::client_core> core, asio::any_io_executor ex, std::string_view name)
      : read_(core, ex, name), write_(std::move(core), std::move(ex), name) {}

  const std::string& name() const noexcept { return read_.name(); }
  deadbolt::read_lock& read() noexcept { return read_; }
  deadbolt::write_lock& write() noexcept { return write_; }

 private:
  deadbolt::read_lock read_;
  deadbolt::write_lock write_;
};

}  // namespace deadbolt
