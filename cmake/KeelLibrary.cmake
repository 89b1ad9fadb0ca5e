# keel_library(NAME <target> EXPORT_NAME <name> SOURCES ... DEPS ...)
# A static library with the repository root (build tree) or include/keel
# (install tree) on its include path, exported as Keel::<name>.
function(keel_library)
  cmake_parse_arguments(ARG "" "NAME;EXPORT_NAME" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}/keel>)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_options(${ARG_NAME} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(ARG_EXPORT_NAME)
    set_target_properties(${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
    add_library(Keel::${ARG_EXPORT_NAME} ALIAS ${ARG_NAME})
  endif()
  install(TARGETS ${ARG_NAME} EXPORT KeelTargets ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
