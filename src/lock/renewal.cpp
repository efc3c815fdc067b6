// How the watchdog's batches are written (src/engine/watchdog.cpp asks; the lock side knows):
//   plain and write holds   lua/lock_renew.lua: KEYS = the lock hashes, ARGV = lease, owner fields
//   read holds              lua/read_renew.lua: KEYS = each hash and its timeout-key prefix
// Both answer one flag per hold: 1 renewed, 0 gone (docs/protocol.md §11).
#include "engine/renewal_script.hpp"
#include "lock/lock_protocol.hpp"
#include "pipeline/script_call.hpp"
#include "scripts.hpp"

namespace deadbolt::detail {

hold_field renewal_kind(hold_field field) { return field == hold_field::read ? hold_field::read : hold_field::plain; }

std::size_t renewal_batch_limit(hold_field kind, std::size_t max_keys) {
  return kind == hold_field::read ? max_keys / 2 : max_keys;  // a read hold takes two keys
}

void encode_renewal(resp::encoder& e, request& r, hold_field kind, const hold* const holds[], std::size_t n,
                    std::string_view lease_ms, std::string_view client_id) {
  const bool reads = kind == hold_field::read;
  begin_script(e, r, reads ? scripts::read_renew : scripts::lock_renew, reads ? 2 * n : n, 1 + n);
  for (std::size_t i = 0; i < n; ++i) {
    e.bulk(holds[i]->name);
    if (reads) read_timeout_prefix(e, holds[i]->name, {client_id, decimal(holds[i]->owner).view()});
  }
  e.bulk(lease_ms);
  for (std::size_t i = 0; i < n; ++i) {
    write_owner_field(e, {client_id, decimal(holds[i]->owner).view()}, holds[i]->field);
  }
}

}  // namespace deadbolt::detail
