# Installs the public headers, libraries, the `keel` binary and an exported
# CMake package so that a host program can
#
#   find_package(Keel REQUIRED COMPONENTS conformance)
#   target_link_libraries(my_host PRIVATE Keel::cli)        # or Keel::core, Keel::drivers
#   target_link_libraries(my_tests PRIVATE Keel::conformance)
#
# Libraries join the export set KeelTargets through keel_library()
# (cmake/KeelLibrary.cmake) or their own install(TARGETS ... EXPORT KeelTargets).
# Only the headers a host program needs are installed, under include/keel/
# with their repository paths, so installed code includes them exactly as
# Keel's sources do ("keel/core/event_bus.h"): the API, the driver and store
# factories, the storage seam, the CLI entry and what they include. The
# server, client, benchmarks and the drivers' internals stay private.
# tests/host is a standalone project that builds against this install (the
# `host_program` test, which also checks that the installed headers include
# only each other).
include(CMakePackageConfigHelpers)

set(KEEL_INSTALL_CMAKEDIR ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)

set(KEEL_PUBLIC_HEADERS
  cmd/keel/cli.h
  core/append_plan.h
  core/backoff.h
  core/clock.h
  core/config.h
  core/collections.h
  core/commit_hook.h
  core/consumer_groups.h
  core/cursor.h
  core/driver_base.h
  core/driver_factory.h
  core/errors.h
  core/event.h
  core/event_bus.h
  core/fanout.h
  core/forwarding_bus.h
  core/group_processor.h
  core/log_bus.h
  core/logger.h
  core/metadata_store.h
  core/mutex.h
  core/option_spec.h
  core/publish_validation.h
  core/redactor.h
  core/registry.h
  core/replayer.h
  core/status_macros.h
  core/stream_log.h
  core/stream_policy.h
  core/subscription.h
  core/tiered_storage.h
  drivers/builtin_drivers.h
  statestore/state_store.h)
foreach(header IN LISTS KEEL_PUBLIC_HEADERS)
  cmake_path(GET header PARENT_PATH dir)
  install(FILES ${header} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/keel/${dir})
endforeach()
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
