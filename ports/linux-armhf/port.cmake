# Linux on armhf (glibc): the POSIX hooks, cross-compiled.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
