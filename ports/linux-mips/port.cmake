# Linux on 32-bit big-endian MIPS (glibc, o32), an OpenWrt-class router: the POSIX hooks,
# cross-compiled.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
# Host names: the system resolver (getaddrinfo), unless DEADBOLT_SYSTEM_RESOLVER is OFF.
set(DEADBOLT_PORT_RESOLVER_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/system_resolver.cpp)
# 32-bit MIPS has no 64-bit atomic instructions: GCC calls libatomic for std::atomic<std::int64_t>
# (the library's counters and deadlines). The port target passes it on to every program that links
# deadbolt, the installed package's and pkg-config's too.
set(DEADBOLT_PORT_LINK_LIBRARIES atomic)
