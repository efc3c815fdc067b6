// The version macros, deadbolt::version() and CMake's project version agree.
#include <doctest/doctest.h>

#include <string>

#include "deadbolt/version.hpp"

TEST_CASE("the version is one and the same everywhere") {
  const std::string from_macros = std::to_string(DEADBOLT_VERSION_MAJOR) + "." +
                                  std::to_string(DEADBOLT_VERSION_MINOR) + "." +
                                  std::to_string(DEADBOLT_VERSION_PATCH);
  CHECK(std::string(deadbolt::version()) == from_macros);
  CHECK(from_macros == DEADBOLT_PROJECT_VERSION);
  CHECK(DEADBOLT_VERSION_NUMBER ==
        DEADBOLT_VERSION_MAJOR * 10000 + DEADBOLT_VERSION_MINOR * 100 + DEADBOLT_VERSION_PATCH);
}
