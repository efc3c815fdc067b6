// What a file must include before any Asio header (deadbolt's public headers include only the Asio
// headers they use, after this one). In builds without exceptions (ASIO_NO_EXCEPTIONS) Asio calls
// asio::detail::throw_exception and leaves its definition to the application: the port ends the
// process with the exception's message. deadbolt itself uses the error_code overloads, which never
// reach it.
#pragma once

#if defined(ASIO_NO_EXCEPTIONS)
#include <asio/detail/throw_exception.hpp>

#include "deadbolt/port/hooks.hpp"

namespace asio::detail {
template <typename Exception>
void throw_exception(const Exception& e) {
  deadbolt::port::fatal(e.what());
}
}  // namespace asio::detail
#endif
