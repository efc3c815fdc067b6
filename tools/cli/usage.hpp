// The help texts: `deadbolt --help` and each subcommand's own (`deadbolt run --help`).
#pragma once

#include <optional>
#include <string_view>

#include "options.hpp"

namespace deadbolt::cli {

/// The full text for `deadbolt --help`, or one subcommand's.
std::string_view usage(std::optional<subcommand> s = std::nullopt);

}  // namespace deadbolt::cli
