# Third-party code: Asio (standalone) and doctest, both header-only and architecture-independent.
# A cross compiler does not search the build machine's /usr/include (and must not: its other headers
# are for the build machine), so when cross-compiling we expose just these headers through a folder of
# symbolic links.
find_package(Threads REQUIRED)
if(DEADBOLT_TLS)
  find_package(OpenSSL 1.1.1)
  if(NOT OPENSSL_FOUND)
    if(CMAKE_CROSSCOMPILING)
      set(deadbolt_openssl_hint "the target's OpenSSL, e.g. Debian's libssl-dev:arm64 for ports/linux-aarch64")
    else()
      set(deadbolt_openssl_hint "Debian's libssl-dev")
    endif()
    message(FATAL_ERROR "DEADBOLT_TLS=ON needs OpenSSL (${deadbolt_openssl_hint}); or configure with -DDEADBOLT_TLS=OFF")
  endif()
endif()

function(deadbolt_find_header out header)
  find_path(${out} ${header} PATHS /usr/include /usr/local/include NO_CMAKE_FIND_ROOT_PATH)
  if(NOT ${out})
    message(FATAL_ERROR "${header} not found: install ${ARGN}")
  endif()
endfunction()

function(deadbolt_header_dir out)
  if(NOT CMAKE_CROSSCOMPILING)
    set(${out} ${ARGV1} PARENT_SCOPE)
    return()
  endif()
  set(links ${CMAKE_BINARY_DIR}/third_party_include)
  foreach(entry IN LISTS ARGN)
    get_filename_component(name ${entry} NAME)
    if(NOT EXISTS ${links}/${name})
      file(MAKE_DIRECTORY ${links})
      file(CREATE_LINK ${entry} ${links}/${name} SYMBOLIC)
    endif()
  endforeach()
  set(${out} ${links} PARENT_SCOPE)
endfunction()

deadbolt_find_header(DEADBOLT_ASIO_DIR asio.hpp "Debian's libasio-dev")
deadbolt_header_dir(asio_dir ${DEADBOLT_ASIO_DIR} ${DEADBOLT_ASIO_DIR}/asio.hpp ${DEADBOLT_ASIO_DIR}/asio)
add_library(deadbolt_asio INTERFACE)
add_library(deadbolt::asio ALIAS deadbolt_asio)
set_target_properties(deadbolt_asio PROPERTIES EXPORT_NAME asio)
target_include_directories(deadbolt_asio SYSTEM INTERFACE $<BUILD_INTERFACE:${asio_dir}>)
target_compile_definitions(deadbolt_asio INTERFACE ASIO_STANDALONE ASIO_NO_DEPRECATED)
target_link_libraries(deadbolt_asio INTERFACE Threads::Threads)

# A build without exceptions compiles Asio with ASIO_NO_EXCEPTIONS and ASIO_NO_TYPEID (set directory-wide
# by DeadboltOptions.cmake, so they reach neither the package nor a parent project). Asio's inline and
# template code in deadbolt's headers must be compiled the same way by consumers: pass them on.
if(DEADBOLT_NO_EXCEPTIONS)
  target_compile_definitions(deadbolt_asio INTERFACE ASIO_NO_EXCEPTIONS ASIO_NO_TYPEID)
endif()

if(DEADBOLT_BUILD_TESTS)
  deadbolt_find_header(DEADBOLT_DOCTEST_DIR doctest/doctest.h "Debian's doctest-dev")
  deadbolt_header_dir(doctest_dir ${DEADBOLT_DOCTEST_DIR} ${DEADBOLT_DOCTEST_DIR}/doctest)
  add_library(deadbolt_doctest INTERFACE)
  target_include_directories(deadbolt_doctest SYSTEM INTERFACE ${doctest_dir})
  if(DEADBOLT_NO_EXCEPTIONS)
    # REQUIRE ends the test program instead of throwing.
    target_compile_definitions(deadbolt_doctest INTERFACE DOCTEST_CONFIG_NO_EXCEPTIONS_BUT_WITH_ALL_ASSERTS)
  endif()
endif()
