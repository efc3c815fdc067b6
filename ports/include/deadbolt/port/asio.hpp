// All of Asio, for deadbolt's sources, tests and tools: include it through this header (see
// asio_config.hpp for builds without exceptions).
#pragma once

#include "deadbolt/port/asio_config.hpp"

#include <asio.hpp>
