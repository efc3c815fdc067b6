// The bytes of one command as the encoder writes it, for tests that compare what a state machine sends.
#pragma once

#include <string>

#include "deadbolt/resp/encoder.hpp"

namespace test_support {

template <typename... Args>
std::string cmd(const Args&... args) {
  std::string out;
  deadbolt::resp::encoder(out).command(args...);
  return out;
}

}  // namespace test_support
