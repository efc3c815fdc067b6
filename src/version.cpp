#include "deadbolt/version.hpp"

#define DEADBOLT_STRINGIFY_(x) #x
#define DEADBOLT_STRINGIFY(x) DEADBOLT_STRINGIFY_(x)

namespace deadbolt {

const char* version() noexcept {
  return DEADBOLT_STRINGIFY(DEADBOLT_VERSION_MAJOR) "." DEADBOLT_STRINGIFY(DEADBOLT_VERSION_MINOR) "." DEADBOLT_STRINGIFY(
      DEADBOLT_VERSION_PATCH);
}

}  // namespace deadbolt
