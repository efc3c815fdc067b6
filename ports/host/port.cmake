# The reference port: the machine doing the build.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
