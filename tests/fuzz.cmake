# Fuzzing every file reader with libFuzzer (label fuzz): one ctest entry per reader, each
# running FUZZ_SECONDS from the seeds in tests/fuzz/corpus/<target>/ (inputs that once failed
# are kept there as regression cases).
#
# Included by tests/CMakeLists.txt, and run as a script (cmake -P fuzz.cmake) by each entry:
# then it builds the target with clang in its own directory, so a missing clang never breaks
# the GCC build; skipped without clang unless CI=true.

set(greensched_fuzz_targets openb_nodes openb_pods fleet power_model learned_model
    decision_record node_events series prices weather)

if(CMAKE_SCRIPT_MODE_FILE)
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
  set(src ${SOURCE_DIR}/src/greensched)
  set(sources
    ${SOURCE_DIR}/tests/fuzz/readers_fuzz.cpp
    ${src}/core/gpu_model.cpp
    ${src}/core/json_fields.cpp
    ${src}/core/text_file.cpp
    ${src}/core/cluster.cpp
    ${src}/trace/csv.cpp
    ${src}/trace/openb_reader.cpp
    ${src}/trace/builtin_workload.cpp
    ${src}/trace/workload.cpp
    ${src}/multi/fleet.cpp
    ${src}/multi/site_energy.cpp
    ${src}/energy/battery.cpp
    ${src}/energy/cooling.cpp
    ${src}/energy/hourly_series.cpp
    ${src}/energy/price_series.cpp
    ${src}/energy/solar.cpp
    ${src}/energy/weather.cpp
    ${src}/energy/wind.cpp
    ${src}/multi/time_series.cpp
    ${src}/multi/series_readers.cpp
    ${src}/multi/synthetic_carbon.cpp
    ${src}/core/utc_time.cpp
    ${src}/power/power_model.cpp
    ${BINARY_DIR}/src/greensched/power/builtin_power_model.cpp
    ${src}/learn/linear_model.cpp
    ${src}/learn/features.cpp
    ${src}/frag/fragmentation.cpp
    ${src}/frag/target_workload.cpp
    ${src}/explain/explanation.cpp
    ${src}/sim/node_events.cpp)
  # One binary for all targets, built by whichever entry runs first; the lock keeps entries
  # run in parallel from building it at once.
  set(binary ${BUILD_DIR}/readers_fuzz)
  file(MAKE_DIRECTORY ${BUILD_DIR})
  file(LOCK ${BUILD_DIR}/build.lock TIMEOUT 1200)
  set(stale FALSE)
  if(NOT EXISTS ${binary})
    set(stale TRUE)
  else()
    file(GLOB_RECURSE headers ${src}/*.hpp)
    foreach(s ${sources} ${headers})
      if(${s} IS_NEWER_THAN ${binary})
        set(stale TRUE)
      endif()
    endforeach()
  endif()
  if(stale)
    message("building ${binary} with ${CLANGXX}")
    execute_process(
      COMMAND ${CLANGXX} -std=c++20 -O1 -g -fsanitize=fuzzer,address,undefined
              -fno-sanitize-recover=undefined -DFMT_SHARED -I${SOURCE_DIR}/src ${sources} -lfmt
              -o ${binary}
      RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      file(LOCK ${BUILD_DIR}/build.lock RELEASE)
      if(NOT ci STREQUAL "true" AND err MATCHES "clang_rt|fuzzer")
        message("SKIPPED: clang cannot link libFuzzer (Debian: apt-get install "
                "libclang-rt-14-dev):\n${err}")
        return()
      endif()
      message(FATAL_ERROR "building the fuzz target failed:\n${out}\n${err}")
    endif()
  endif()
  file(LOCK ${BUILD_DIR}/build.lock RELEASE)
  # New inputs go to WORK/corpus; the kept seeds are read from the source tree, never written.
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK}/corpus)
  set(ENV{GREENSCHED_FUZZ_TARGET} ${TARGET})
  execute_process(
    COMMAND ${binary} -max_total_time=${FUZZ_SECONDS} -max_len=16384 -timeout=10
            -rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix=${WORK}/ ${WORK}/corpus
            ${SOURCE_DIR}/tests/fuzz/corpus/${TARGET}
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the ${TARGET} fuzzer found a failing input: see ${WORK}/crash-* "
                        "(or leak-*, timeout-*); fix it and keep it in "
                        "tests/fuzz/corpus/${TARGET}/")
  endif()
  return()
endif()

# --- configure mode ---------------------------------------------------------------------------
foreach(target ${greensched_fuzz_targets})
  add_test(NAME fuzz.reader_${target}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DBINARY_DIR=${CMAKE_BINARY_DIR}
            -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/readers-fuzz
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/readers-fuzz/${target} -DTARGET=${target}
            -DFUZZ_SECONDS=20 -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(fuzz.reader_${target} PROPERTIES LABELS fuzz TIMEOUT 1500
                       SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endforeach()
