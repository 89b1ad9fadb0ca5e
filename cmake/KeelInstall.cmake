# Installs headers, libraries and an exported CMake package so that a host
# program can `find_package(Keel)` and link Keel::core, Keel::drivers,
# Keel::cli (and Keel::conformance to run the conformance suite).
include(CMakePackageConfigHelpers)

install(DIRECTORY core statestore drivers cmd
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/keel
        FILES_MATCHING PATTERN "*.h")
install(FILES ${KEEL_PROTO_HEADERS} DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/keel/core/proto)

install(EXPORT KeelTargets NAMESPACE Keel:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)
configure_package_config_file(cmake/KeelConfig.cmake.in
                              ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake
                              INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/KeelConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/KeelConfigVersion.cmake
              cmake/KeelDependencies.cmake
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/Keel)
