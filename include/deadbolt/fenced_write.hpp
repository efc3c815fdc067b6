// Fenced writes to a resource kept in Redis: what a fencing token is for (docs/fenced_writes.md).
//
// A lock holder whose lease lapsed (a long pause, a partition) may still write. A fenced_lock hands
// out a token with every acquisition; the resource keeps the newest token it has accepted, and who
// wrote with it, and refuses an operation carrying an older one. These calls do that for a string key:
// one script (lua/fenced_write.lua) checks the token and its writer against the key's fence
// (`fence_key_of(key)`), records them, and reads or writes the key, in one step on the server.
//
//   auto lock = locks.fenced_lock("ledger");
//   lock.async_lock(owner, [&](std::error_code ec, std::uint64_t token) {
//     if (ec) return;
//     deadbolt::async_fenced_set(store, "ledger:balance", token, deadbolt::fence_writer(locks.id(), owner), "42",
//         [](std::error_code ec, deadbolt::fenced_result r) {
//           if (!ec && !r.accepted) { /* another holder wrote first: ours is stale */ }
//         });
//   });
//
// The store may be the lock's own server or any other (a `client` of its own). A token equal to the
// newest is accepted from the writer it was accepted from: one holder reads, then writes, with the
// same token; a second holder of that token (a failover handed it out twice) is refused. Without a
// writer, the calls are an anonymous writer's, and two anonymous holders of one token both pass. Not
// part of Redisson's protocol: the resource and its fence are the caller's keys, which no Redisson
// object uses.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

#include "deadbolt/port/asio_config.hpp"
#include <asio/associated_executor.hpp>
#include <asio/async_result.hpp>
#include <asio/bind_executor.hpp>

#include "deadbolt/client.hpp"
#include "deadbolt/error.hpp"
#include "deadbolt/reply.hpp"

namespace deadbolt {

/// What a fenced read or write answered.
struct fenced_result {
  /// True: done. False: refused, because the resource had accepted a newer token (the caller's
  /// hold is stale: another holder came after it).
  bool accepted = false;
  /// The newest token the resource has accepted, this one included when accepted.
  std::uint64_t newest_token = 0;
  /// A read that was accepted: the key's value; empty when the key does not exist.
  std::optional<std::string> value;
  /// When the server refused the command (the error code says how): its words, e.g. "ERR fenced
  /// write: the fence key does not hold a fencing token".
  std::string error;
};

/// The key that keeps `key`'s newest token: `<key>:fence` when `key` has a hash tag (`{...}` with
/// something inside), else `{<key>}:fence`. Either way in `key`'s Redis Cluster slot, so that one
/// script may touch both.
std::string fence_key_of(std::string_view key);

/// Who writes with a token, for the fence: the holder's lock field, "<id of the client that holds the
/// lock>:<owner id>" (`client::id()`, `blocking_client::id()`; the owner the lock was taken for). Two
/// holders that carry the same token (a failover handed it out twice) then differ.
std::string fence_writer(std::string_view lock_client_id, std::int64_t owner);

namespace detail {
/// The EVAL command of a fenced read (`value` unset) or write by `writer` (unset: an anonymous
/// writer); errc::invalid_argument for an empty key, a token of 0 (fenced_lock's tokens start at 1) or
/// an empty writer.
std::error_code fenced_command(std::string_view key, std::uint64_t token, const std::optional<std::string_view>& writer,
                               const std::optional<std::string_view>& value, std::vector<std::string>& out);
/// Reads the script's reply. An error reply gets the code every command's does (docs/errors.md:
/// WRONGTYPE: wrong_type, when the key holds another type; NOPERM: permission_denied; READONLY:
/// not_master; ...; any other, e.g. a fence key that holds no token: server_error) and keeps its
/// words (fenced_result::error).
std::error_code read_fenced_reply(const reply& r, fenced_result& out);

template <typename Token>
auto async_fenced(client& c, std::string_view key, std::uint64_t token, std::optional<std::string_view> writer,
                  std::optional<std::string_view> value, Token&& completion) {
  std::vector<std::string> command;
  const std::error_code bad = fenced_command(key, token, writer, value, command);
  return asio::async_initiate<Token, void(std::error_code, fenced_result)>(
      [&c](auto handler, std::vector<std::string> args, std::error_code refused) {
        auto ex = asio::get_associated_executor(handler, c.get_executor());
        // Bad input goes through the command's own path too (an empty command fails at once), so
        // that the handler is called as for a reply: never inline, on its executor.
        c.async_command(std::move(args), asio::bind_executor(ex, [handler = std::move(handler), refused](
                                                                     std::error_code ec, reply r) mutable {
                          fenced_result result;
                          if (refused) ec = refused;
                          else if (!ec || r.is_error()) ec = read_fenced_reply(r, result);
                          std::move(handler)(ec, std::move(result));
                        }));
      },
      completion, bad ? std::vector<std::string>{} : std::move(command), bad);
}
}  // namespace detail

/// Sets `key` to `value` if `token` is not older than the newest token accepted for `key`, which it
/// then becomes, as an anonymous writer (equal to the newest: accepted only if that one came from an
/// anonymous writer too). Signature: void(std::error_code, fenced_result). errc::invalid_argument for
/// an empty key or token 0; the connection's errors as any command's.
template <typename Token>
auto async_fenced_set(client& c, std::string_view key, std::uint64_t token, std::string_view value, Token&& completion) {
  return detail::async_fenced(c, key, token, std::nullopt, value, std::forward<Token>(completion));
}

/// The same, by `writer` (fence_writer()): a token equal to the newest is accepted only from the
/// writer that the key last accepted it from. errc::invalid_argument for an empty writer too.
template <typename Token>
auto async_fenced_set(client& c, std::string_view key, std::uint64_t token, std::string_view writer,
                      std::string_view value, Token&& completion) {
  return detail::async_fenced(c, key, token, writer, value, std::forward<Token>(completion));
}

/// Reads `key` if `token` is not older than the newest accepted for it, which it then becomes (an
/// anonymous writer, as async_fenced_set's): a fenced read, so that a holder whose read-modify-write
/// began before a newer holder's read cannot write over it (docs/fenced_writes.md). Signature:
/// void(std::error_code, fenced_result).
template <typename Token>
auto async_fenced_get(client& c, std::string_view key, std::uint64_t token, Token&& completion) {
  return detail::async_fenced(c, key, token, std::nullopt, std::nullopt, std::forward<Token>(completion));
}

/// The same, by `writer` (fence_writer()). errc::invalid_argument for an empty writer too.
template <typename Token>
auto async_fenced_get(client& c, std::string_view key, std::uint64_t token, std::string_view writer,
                      Token&& completion) {
  return detail::async_fenced(c, key, token, writer, std::nullopt, std::forward<Token>(completion));
}

}  // namespace deadbolt
