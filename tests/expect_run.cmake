# For the end-to-end test scripts run with `cmake -P`: expect_run(RESULT <exit code> ARGS <args...>
# [OUT_MATCH <regex>] [ERR_MATCH <regex>]) runs ${GREENSCHED} with the arguments and fails the
# script unless it exits with that code and its stdout and stderr match the regexes given.
function(expect_run)
  cmake_parse_arguments(E "" "RESULT;OUT_MATCH;ERR_MATCH" "ARGS" ${ARGN})
  execute_process(COMMAND "${GREENSCHED}" ${E_ARGS} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL E_RESULT)
    message(FATAL_ERROR "greensched ${E_ARGS}: exit ${rc}, expected ${E_RESULT}\n${out}\n${err}")
  endif()
  if(E_OUT_MATCH AND NOT out MATCHES "${E_OUT_MATCH}")
    message(FATAL_ERROR "greensched ${E_ARGS}: stdout does not match ${E_OUT_MATCH}:\n${out}")
  endif()
  if(E_ERR_MATCH AND NOT err MATCHES "${E_ERR_MATCH}")
    message(FATAL_ERROR "greensched ${E_ARGS}: stderr does not match ${E_ERR_MATCH}:\n${err}")
  endif()
endfunction()
