# For the end-to-end test scripts run with `cmake -P`: skip_or_fail(<why>) reports a check that
# cannot run here (missing data, Go, modules) as skipped, or fails it under CI=true, the rule
# of tests/require_data.cmake for scripts.
function(skip_or_fail why)
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "CI=true but ${why}")
  endif()
  message("SKIPPED: ${why}")
endfunction()
