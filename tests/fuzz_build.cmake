# Building and running a libFuzzer target with clang from a CMake script (cmake -P), so that a
# missing clang never breaks the GCC build. Used by fuzz.cmake (file readers) and serve.cmake
# (the extender's request parser).

# greensched_fuzz_binary(<result> BINARY <path> SOURCES <cpp...> [WATCH <header...>])
# Builds BINARY from SOURCES unless it is newer than every SOURCE and WATCH file. Sets <result>
# to BINARY, or to "" after printing "SKIPPED: ..." when clang or its libFuzzer runtime is
# missing (a fatal error under CI=true).
function(greensched_fuzz_binary result)
  cmake_parse_arguments(arg "" "BINARY" "SOURCES;WATCH" ${ARGN})
  set(${result} "" PARENT_SCOPE)
  set(ci "$ENV{CI}")
  find_program(CLANGXX NAMES clang++ clang++-16 clang++-15 clang++-14)
  if(NOT CLANGXX)
    if(ci STREQUAL "true")
      message(FATAL_ERROR "CI=true but clang++ is missing (Debian: apt-get install clang libclang-rt-14-dev)")
    endif()
    message("SKIPPED: clang++ not found; the fuzz test needs clang and its libFuzzer runtime "
            "(Debian: apt-get install clang libclang-rt-14-dev)")
    return()
  endif()
  set(stale FALSE)
  if(NOT EXISTS ${arg_BINARY})
    set(stale TRUE)
  else()
    foreach(s ${arg_SOURCES} ${arg_WATCH})
      if(${s} IS_NEWER_THAN ${arg_BINARY})
        set(stale TRUE)
      endif()
    endforeach()
  endif()
  if(stale)
    message("building ${arg_BINARY} with ${CLANGXX}")
    execute_process(
      COMMAND ${CLANGXX} -std=c++20 -O1 -gline-tables-only -fsanitize=fuzzer,address,undefined
              -fno-sanitize-recover=undefined -DFMT_SHARED -I${SOURCE_DIR}/src ${arg_SOURCES}
              -lfmt -o ${arg_BINARY}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      if(NOT ci STREQUAL "true" AND err MATCHES "clang_rt|fuzzer")
        message("SKIPPED: clang cannot link libFuzzer (Debian: apt-get install "
                "libclang-rt-14-dev):\n${err}")
        return()
      endif()
      message(FATAL_ERROR "building the fuzz target failed:\n${out}\n${err}")
    endif()
  endif()
  set(${result} ${arg_BINARY} PARENT_SCOPE)
endfunction()

# greensched_fuzz_run(BINARY <path> WORK <dir> SECONDS <n> MAX_LEN <bytes> CORPUS <dir...>
#                     FAILURE <message>)
# Fuzzes for SECONDS ($GREENSCHED_FUZZ_SECONDS overrides it: `make fuzz` runs longer); new
# inputs go to the first CORPUS directory, findings to WORK/. Fails with FAILURE when the fuzzer
# finds a crash, leak or timeout, and prints the finding in hex, so that a log alone (a CI run's)
# is enough to reproduce it.
function(greensched_fuzz_run)
  cmake_parse_arguments(arg "" "BINARY;WORK;SECONDS;MAX_LEN;FAILURE" "CORPUS" ${ARGN})
  if(DEFINED ENV{GREENSCHED_FUZZ_SECONDS})
    set(arg_SECONDS $ENV{GREENSCHED_FUZZ_SECONDS})
  endif()
  execute_process(
    COMMAND ${arg_BINARY} -max_total_time=${arg_SECONDS} -max_len=${arg_MAX_LEN} -timeout=10
            -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${arg_WORK}/ ${arg_CORPUS}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(GLOB findings ${arg_WORK}/crash-* ${arg_WORK}/leak-* ${arg_WORK}/timeout-*
         ${arg_WORK}/oom-*)
    foreach(finding ${findings})
      file(READ ${finding} hex HEX)
      message(STATUS "finding ${finding} (hex; xxd -r -p turns it back into the file):\n${hex}")
    endforeach()
    message(FATAL_ERROR "${arg_FAILURE}")
  endif()
endfunction()
