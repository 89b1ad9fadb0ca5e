# Installs headers, libraries, the `keel` binary and an exported CMake package
# so that a host program can
#
#   find_package(Keel REQUIRED)
#   target_link_libraries(my_host PRIVATE Keel::cli)        # or Keel::core, Keel::drivers
#   target_link_libraries(my_tests PRIVATE Keel::conformance)
#
# Libraries join the export set KeelTargets through keel_library()
# (cmake/KeelLibrary.cmake) or their own install(TARGETS ... EXPORT KeelTargets).
# Headers keep their repository paths under include/keel, so installed code
# includes them exactly as Keel's sources do ("core/event_bus.h",
# "core/proto/event.pb.h", "tests/conformance/conformance.h").
# tests/host is a standalone project that builds against this install (the
# `host_program` test).
include(CMakePackageConfigHelpers)

set(KEEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)

# cmd/keel-bench is a program, not a library: its headers stay out.
install(DIRECTORY core statestore drivers cmd
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/keel
        FILES_MATCHING PATTERN "*.h"
        PATTERN "keel-bench" EXCLUDE)
install(FILES ${KEEL_PROTO_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/keel/core/proto)
# tests/conformance/CMakeLists.txt installs the conformance suite's public
# header, tests/conformance/conformance.h.

install(EXPORT KeelTargets NAMESPACE Keel:: DESTINATION ${KEEL_INSTALL_CMAKEDIR})
# The conformance suite is a component (find_package(Keel COMPONENTS
# conformance)), installed with a build that has tests; only it needs GTest.
if(TARGET keel_conformance)
  install(EXPORT KeelConformanceTargets NAMESPACE Keel:: DESTINATION ${KEEL_INSTALL_CMAKEDIR})
endif()
configure_package_config_file(cmake/KeelConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake
                              INSTALL_DESTINATION ${KEEL_INSTALL_CMAKEDIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
        DESTINATION ${KEEL_INSTALL_CMAKEDIR})
