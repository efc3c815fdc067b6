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
 private:
  friend class read_write_lock;
  read_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : flag_lock(std::move(core), std::move(ex), name) {}
};

/// The exclusive half: one owner, and no readers but the writer itself (which may also take reads:
/// releasing the write then leaves it a reader — a downgrade). A reader cannot upgrade: taking the
/// write lock while holding a read waits for itself. Operations and leases as reentrant_lock.
class write_lock : public detail::flag_lock<detail::lock_kind::write> {
 private:
  friend class read_write_lock;
  write_lock(std::shared_ptr<detail::client_core> core, executor_type ex, std::string_view name)
      : flag_lock(std::move(core), std::move(ex), name) {}
};

/// A read/write lock (docs/protocol.md §4): both halves share the hash `name` and the channel
/// redisson_rwlock:{name}. There is no writer preference (as in Redisson): a steady stream of readers
/// can keep a writer waiting.
class read_write_lock {
 public:
  const std::string& name() const noexcept { return read_.name(); }
  deadbolt::read_lock& read() noexcept { return read_; }
  deadbolt::write_lock& write() noexcept { return write_; }

 private:
  friend class client;
  read_write_lock(std::shared_ptr<detail::client_core> core, asio::any_io_executor ex, std::string_view name)
      : read_(core, ex, name), write_(std::move(core), std::move(ex), name) {}

  deadbolt::read_lock read_;
  deadbolt::write_lock write_;
};

}  // namespace deadbolt
