# The shared-data rule of the C++ tests (tests/test_data.hpp) for CMake-script tests: a check
# that needs a file of ../shared/data runs where the file is present, is skipped with a
# message where it is absent, and fails under CI=true.
#   require_shared_file(<path> <var>): sets <var> to TRUE when the check may run.
function(require_shared_file path var)
  if(EXISTS "${path}")
    set(${var} TRUE PARENT_SCOPE)
    return()
  endif()
  if("$ENV{CI}" STREQUAL "true")
    message(FATAL_ERROR "CI=true but the shared data file is missing: ${path}")
  endif()
  message(STATUS "SKIPPED: shared data file not found: ${path} (set GREENSCHED_DATA "
                 "or place ../shared/data beside the checkout)")
  set(${var} FALSE PARENT_SCOPE)
endfunction()
