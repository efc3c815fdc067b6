// The register the mutex workload increments, in the store (a redis-server no nemesis touches),
// through the fenced-write script (lua/fenced_write.lua, deadbolt/fenced_write.hpp): a read and a
// write each carry the holder's token and its writer id (the lock field, "<client id>:<owner>"), and
// the store refuses a token older than the newest it has accepted for the register, or equal to it
// from another writer. The script text is passed in (the harness's tree's lua/fenced_write.lua),
// so that a client built against an older deadbolt runs the same script.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <system_error>

#include <deadbolt/client.hpp>

namespace verify {

struct store_result {
  enum outcome { accepted, stale, unknown } outcome = unknown;
  std::int64_t value = 0;  ///< accepted: the register (a read) or what was written
  std::string error;       ///< unknown: why
};

class fenced_store {
 public:
  /// `token` 0 with `fenced` false: the store is not given the token (a resource without fencing).
  fenced_store(deadbolt::client& store, std::string script, bool fenced)
      : store_(store), script_(std::move(script)), fenced_(fenced) {}
  using handler = std::function<void(store_result)>;
  /// The register's value, if `token` is not older than the newest accepted (which it then becomes)
  /// and, when equal, `writer` is the one it was accepted from.
  void read(const std::string& key, std::uint64_t token, const std::string& writer, handler done);
  /// Sets the register to `value`, on the same terms.
  void write(const std::string& key, std::uint64_t token, const std::string& writer, std::int64_t value, handler done);

 private:
  void run(std::vector<std::string> args, handler done);
  deadbolt::client& store_;
  std::string script_;
  bool fenced_;
};

/// The fence key the script keeps a resource's newest token in: the same slot as the resource.
std::string fence_key_of(const std::string& key);
/// A holder's writer id: its lock field (deadbolt::fence_writer(), spelled out here so that the client
/// builds against an older deadbolt too).
inline std::string writer_of(const std::string& client_id, std::int64_t owner) {
  return client_id + ":" + std::to_string(owner);
}

}  // namespace verify
