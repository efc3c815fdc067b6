# Linux on 64-bit RISC-V (glibc, RV64GC): the POSIX hooks, cross-compiled.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
# Host names: the system resolver (getaddrinfo), unless DEADBOLT_SYSTEM_RESOLVER is OFF.
set(DEADBOLT_PORT_RESOLVER_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/system_resolver.cpp)
