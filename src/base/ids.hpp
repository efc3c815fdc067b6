// Random identifiers: the client UUID (first half of every owner field) and unlock request ids.
#pragma once

#include <string>

namespace deadbolt::detail {

/// A random (version 4) UUID in lowercase canonical form, 36 characters, like Java's UUID.toString().
std::string random_uuid();
/// 16 random bytes as 32 lowercase hex characters (Redisson's ServiceManager.generateId()).
std::string random_request_id();

}  // namespace deadbolt::detail
