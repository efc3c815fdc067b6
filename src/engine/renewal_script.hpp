// How the watchdog's renewal batches are written: declared here, for the engine, and defined on the lock
// side (src/lock/renewal.cpp), which knows the scripts and the hash fields. The engine decides when and
// what to renew; it never includes a lock kind's header.
#pragma once

#include <cstddef>
#include <string_view>

#include "deadbolt/resp/encoder.hpp"
#include "engine/holds.hpp"
#include "pipeline/request.hpp"

namespace deadbolt::detail {

/// Which renewal kind a hold of `field` is: holds of one renewal kind share a script call.
hold_field renewal_kind(hold_field field);
/// How many holds of `kind` fit a batch of at most `max_keys` keys.
std::size_t renewal_batch_limit(hold_field kind, std::size_t max_keys);
/// Writes the renewal of `holds` (all of `kind`); the reply is one flag per hold.
void encode_renewal(resp::encoder& e, request& r, hold_field kind, const hold* const holds[], std::size_t n,
                    std::string_view lease_ms, std::string_view client_id);

}  // namespace deadbolt::detail
