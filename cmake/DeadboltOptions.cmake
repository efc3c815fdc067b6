# Build-wide flags: warnings (as an interface target for our own code only) and the no-exceptions mode.
add_library(deadbolt_warnings INTERFACE)
target_compile_options(deadbolt_warnings INTERFACE -Wall -Wextra -Wpedantic)
if(DEADBOLT_WERROR)
  target_compile_options(deadbolt_warnings INTERFACE -Werror)
endif()

if(DEADBOLT_NO_EXCEPTIONS)
  add_compile_options(-fno-exceptions -fno-rtti)
  add_compile_definitions(ASIO_NO_EXCEPTIONS ASIO_NO_TYPEID)
endif()
