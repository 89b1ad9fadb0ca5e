# Checks keel-host's CLI: run as `cmake -DKEEL_HOST=<path> -P check_cli.cmake`.
#  - `drivers` lists the host's driver next to the built-in ones;
#  - `selftest --driver host-journal` passes end to end on it;
#  - an unknown driver is refused and the message lists host-journal.
function(run_host expected_rc)
  execute_process(COMMAND "${KEEL_HOST}" ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc STREQUAL expected_rc)
    message(FATAL_ERROR "keel-host ${ARGN}: exit ${rc}, expected ${expected_rc}\n"
                        "stdout:\n${out}\nstderr:\n${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
endfunction()

function(expect_match text regex what)
  if(NOT text MATCHES "${regex}")
    message(FATAL_ERROR "${what}: no match for '${regex}' in:\n${text}")
  endif()
endfunction()

run_host(0 drivers)
expect_match("${out}" "(^|\n)host-journal\t" "keel-host drivers")
expect_match("${out}" "(^|\n)memory\t" "keel-host drivers")

run_host(0 selftest --driver host-journal)
expect_match("${out}" "selftest passed" "keel-host selftest --driver host-journal")

run_host(1 selftest --driver no-such-driver)
expect_match("${err}" "registered: .*host-journal" "keel-host selftest --driver no-such-driver")

message(STATUS "keel-host CLI checks passed")
