# Cross-compile for Linux on aarch64 with Debian's aarch64-linux-gnu toolchain; run the results under qemu-aarch64.
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(CMAKE_FIND_ROOT_PATH /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)

# OpenSSL (DEADBOLT_TLS) comes from Debian's multiarch libssl-dev:arm64, which installs outside the cross
# root: libraries in /usr/lib/aarch64-linux-gnu, headers in /usr/include (opensslv.h, ...) and
# /usr/include/aarch64-linux-gnu (configuration.h). The cross compiler and linker search those folders
# already; only CMake's find_* calls, confined to the cross root, need to be told.
if(EXISTS /usr/lib/aarch64-linux-gnu/libssl.so AND EXISTS /usr/include/aarch64-linux-gnu/openssl/configuration.h)
  set(OPENSSL_INCLUDE_DIR /usr/include CACHE PATH "OpenSSL headers (libssl-dev:arm64)")
  set(OPENSSL_SSL_LIBRARY /usr/lib/aarch64-linux-gnu/libssl.so CACHE FILEPATH "libssl (libssl-dev:arm64)")
  set(OPENSSL_CRYPTO_LIBRARY /usr/lib/aarch64-linux-gnu/libcrypto.so CACHE FILEPATH "libcrypto (libssl-dev:arm64)")
endif()

# -L makes qemu load the cross root's dynamic loader. Once libc6:arm64 is installed (libssl3:arm64
# needs it), that loader would find the multiarch libc, libm and libgcc_s in /usr/lib/aarch64-linux-gnu
# first: another build of glibc than the loader's. LD_LIBRARY_PATH keeps them from the cross root;
# libssl.so.3 and libcrypto.so.3, which are only in the multiarch folder, still load from there.
set(CMAKE_CROSSCOMPILING_EMULATOR qemu-aarch64 -L /usr/aarch64-linux-gnu -E LD_LIBRARY_PATH=/usr/aarch64-linux-gnu/lib)
