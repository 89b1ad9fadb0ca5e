# keel_library(NAME <target> EXPORT_NAME <name> [EXPORT_SET <set>] SOURCES ... DEPS ...)
# A static library whose headers are included as "keel/<dir>/<file>.h" (the
# build tree's include/ and gen/, or the install tree's include/), exported as Keel::<name> in the export
# set KeelTargets (or <set>: a component's). It carries C++20 to whoever
# links it, so a host program needs no standard setting of its own.
function(keel_library)
  cmake_parse_arguments(ARG "" "NAME;EXPORT_NAME;EXPORT_SET" "SOURCES;DEPS;PRIVATE_DEPS" ${ARGN})
  if(NOT ARG_EXPORT_SET)
    set(ARG_EXPORT_SET KeelTargets)
  endif()
  add_library(${ARG_NAME} STATIC ${ARG_SOURCES})
  target_include_directories(${ARG_NAME} PUBLIC
    $<BUILD_INTERFACE:${KEEL_INCLUDE_DIR}>
    $<BUILD_INTERFACE:${KEEL_GENERATED_INCLUDE_DIR}>
    $<INSTALL_INTERFACE:${CMAKE_INSTALL_INCLUDEDIR}>)
  target_link_libraries(${ARG_NAME} PUBLIC ${ARG_DEPS} PRIVATE ${ARG_PRIVATE_DEPS})
  target_compile_features(${ARG_NAME} PUBLIC cxx_std_20)
  target_compile_options(${ARG_NAME} PRIVATE -Wall -Wextra -Wno-unused-parameter)
  if(ARG_EXPORT_NAME)
    set_target_properties(${ARG_NAME} PROPERTIES EXPORT_NAME ${ARG_EXPORT_NAME})
    add_library(Keel::${ARG_EXPORT_NAME} ALIAS ${ARG_NAME})
  endif()
  install(TARGETS ${ARG_NAME} EXPORT ${ARG_EXPORT_SET} ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
endfunction()
