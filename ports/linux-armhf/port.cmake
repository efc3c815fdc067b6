# Linux on armhf (glibc): the POSIX hooks, cross-compiled.
set(DEADBOLT_PORT_SOURCES ${CMAKE_CURRENT_LIST_DIR}/../posix/hooks.cpp)
# GCC notes that the ARM calling convention for some std types changed in GCC 7.1; everything here is
# built by one compiler, so the note is noise.
add_compile_options(-Wno-psabi)
