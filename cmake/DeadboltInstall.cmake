# `cmake --install`: headers, static libraries, the CLI, a CMake package (find_package(deadbolt) gives
# deadbolt::deadbolt) with a version file, and a pkg-config file (deadbolt.pc).
include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

set(DEADBOLT_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/deadbolt)

install(TARGETS deadbolt deadbolt_resp deadbolt_port deadbolt_asio
  EXPORT deadboltTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
  INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY
    ${PROJECT_SOURCE_DIR}/include/
    ${PROJECT_SOURCE_DIR}/resp/include/
    ${PROJECT_SOURCE_DIR}/ports/include/
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(FILES ${PROJECT_SOURCE_DIR}/LICENSE ${PROJECT_SOURCE_DIR}/CHANGELOG.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
if(TARGET deadbolt_cli)
  install(TARGETS deadbolt_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  install(FILES ${PROJECT_SOURCE_DIR}/docs/deadbolt.1 DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
  install(FILES ${PROJECT_SOURCE_DIR}/tools/cli/completion/deadbolt.bash
    DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions RENAME deadbolt)
endif()

install(EXPORT deadboltTargets NAMESPACE deadbolt:: DESTINATION ${DEADBOLT_CMAKE_DIR})
configure_package_config_file(${CMAKE_CURRENT_LIST_DIR}/deadboltConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/deadboltConfig.cmake
  INSTALL_DESTINATION ${DEADBOLT_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/deadboltConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES
    ${CMAKE_CURRENT_BINARY_DIR}/deadboltConfig.cmake
    ${CMAKE_CURRENT_BINARY_DIR}/deadboltConfigVersion.cmake
  DESTINATION ${DEADBOLT_CMAKE_DIR})

# deadbolt.pc finds the prefix from its own location (${pcfiledir}), so it stays right when the prefix
# is chosen at install time (cmake --install --prefix) or the installed tree is moved; only absolute
# install directories are written as they are.
if(IS_ABSOLUTE "${CMAKE_INSTALL_LIBDIR}")
  set(DEADBOLT_PC_PREFIX "${CMAKE_INSTALL_PREFIX}")
else()
  string(REGEX REPLACE "[^/]+" ".." pc_up "${CMAKE_INSTALL_LIBDIR}/pkgconfig")
  set(DEADBOLT_PC_PREFIX "\${pcfiledir}/${pc_up}")
endif()
foreach(dir LIBDIR INCLUDEDIR)
  if(IS_ABSOLUTE "${CMAKE_INSTALL_${dir}}")
    set(DEADBOLT_PC_${dir} "${CMAKE_INSTALL_${dir}}")
  else()
    set(DEADBOLT_PC_${dir} "\${prefix}/${CMAKE_INSTALL_${dir}}")
  endif()
endforeach()
set(DEADBOLT_PC_CFLAGS "-DASIO_STANDALONE -DASIO_NO_DEPRECATED")
if(DEADBOLT_NO_EXCEPTIONS)
  string(APPEND DEADBOLT_PC_CFLAGS " -DASIO_NO_EXCEPTIONS -DASIO_NO_TYPEID")
endif()
# TLS: libdeadbolt.a uses OpenSSL (linked privately, but a static library passes it on to the program: Requires, not Requires.private).
set(DEADBOLT_PC_REQUIRES "")
if(DEADBOLT_TLS)
  set(DEADBOLT_PC_REQUIRES "openssl")
endif()
# The port's system libraries (ports/<port>/port.cmake: DEADBOLT_PORT_LINK_LIBRARIES, e.g. libatomic).
set(DEADBOLT_PC_PORT_LIBS "")
foreach(lib IN LISTS DEADBOLT_PORT_LINK_LIBRARIES)
  string(APPEND DEADBOLT_PC_PORT_LIBS " -l${lib}")
endforeach()
configure_file(${CMAKE_CURRENT_LIST_DIR}/deadbolt.pc.in ${CMAKE_CURRENT_BINARY_DIR}/deadbolt.pc @ONLY)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/deadbolt.pc DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig)
