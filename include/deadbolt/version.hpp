// deadbolt's version: the macros for the preprocessor, version() for the library actually linked.
// The numbers here are the single source of the version: CMake's project(VERSION) reads them.
#pragma once

#define DEADBOLT_VERSION_MAJOR 0
#define DEADBOLT_VERSION_MINOR 1
#define DEADBOLT_VERSION_PATCH 0
/// One number that compares: major * 10000 + minor * 100 + patch.
#define DEADBOLT_VERSION_NUMBER (DEADBOLT_VERSION_MAJOR * 10000 + DEADBOLT_VERSION_MINOR * 100 + DEADBOLT_VERSION_PATCH)

namespace deadbolt {

/// The version of the library this program is linked with, "MAJOR.MINOR.PATCH" (it may differ from the
/// headers' DEADBOLT_VERSION_* when a program is relinked against another build).
const char* version() noexcept;

}  // namespace deadbolt
