# Linux on 64-bit RISC-V (glibc, RV64GC): the POSIX hooks, cross-compiled.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
# Host names: the system resolver (getaddrinfo), unless DEADBOLT_SYSTEM_RESOLVER is OFF.
set(DEADBOLT_PORT_RESOLVER_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/system_resolver.cpp)
# GCC 12 has no inline sequence for RISC-V's one- and two-byte atomic exchange (std::atomic<bool>):
# it calls libatomic. The port target passes it on to every program that links deadbolt.
set(DEADBOLT_PORT_LINK_LIBRARIES atomic)
