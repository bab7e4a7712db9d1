# Fuzzing every file reader with libFuzzer (label fuzz): one ctest entry per reader, each
# running FUZZ_SECONDS from the seeds in tests/fuzz/corpus/<target>/ (inputs that once failed
# are kept there as regression cases).
#
# Included by tests/CMakeLists.txt, and run as a script (cmake -P fuzz.cmake) by each entry:
# then it builds the target with clang in its own directory, so a missing clang never breaks
# the GCC build; skipped without clang unless CI=true.

set(greensched_fuzz_targets openb_nodes openb_pods fleet power_model learned_model
    decision_record node_events series prices weather holidays kubectl sacct)

if(CMAKE_SCRIPT_MODE_FILE)
  include(${CMAKE_CURRENT_LIST_DIR}/fuzz_build.cmake)
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
    ${src}/forecast/holidays.cpp
    ${BINARY_DIR}/src/greensched/forecast/builtin_holidays.cpp
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
    ${src}/sim/node_events.cpp
    ${src}/sim/queue_discipline.cpp
    ${src}/serve/node_object.cpp
    ${src}/serve/pod_request.cpp
    ${src}/serve/quantity.cpp
    ${src}/serve/json_fields.cpp
    ${src}/serve/gpu_index.cpp
    ${src}/convert/openb_writer.cpp
    ${src}/convert/gpu_names.cpp
    ${src}/convert/convert_summary.cpp
    ${src}/convert/convert_kubectl.cpp
    ${src}/convert/convert_sacct.cpp)
  # One binary for all targets, built by the fuzz.readers_build entry (TARGET empty) that
  # the others wait for, so no ctest slot idles on a build; each entry checks it is up to date
  # (the lock keeps entries run by hand in parallel from building it at once).
  set(binary ${BUILD_DIR}/readers_fuzz)
  file(MAKE_DIRECTORY ${BUILD_DIR})
  file(LOCK ${BUILD_DIR}/build.lock TIMEOUT 1200)
  file(GLOB_RECURSE headers ${src}/*.hpp)
  greensched_fuzz_binary(built BINARY ${binary} SOURCES ${sources}
    ALONE ${src}/multi/site_energy.cpp WATCH ${headers})
  file(LOCK ${BUILD_DIR}/build.lock RELEASE)
  if(NOT built OR NOT TARGET)
    return()
  endif()
  # New inputs go to WORK/corpus; the kept seeds are read from the source tree, never written.
  file(REMOVE_RECURSE ${WORK})
  file(MAKE_DIRECTORY ${WORK}/corpus)
  set(ENV{GREENSCHED_FUZZ_TARGET} ${TARGET})
  greensched_fuzz_run(BINARY ${binary} WORK ${WORK} SECONDS ${FUZZ_SECONDS} MAX_LEN 16384
    CORPUS ${WORK}/corpus ${SOURCE_DIR}/tests/fuzz/corpus/${TARGET}
    FAILURE "the ${TARGET} fuzzer found a failing input: see ${WORK}/crash-* (or leak-*, "
            "timeout-*); fix it and keep it in tests/fuzz/corpus/${TARGET}/")
  return()
endif()

# --- configure mode ---------------------------------------------------------------------------
add_test(NAME fuzz.readers_build
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DBINARY_DIR=${CMAKE_BINARY_DIR}
          -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/readers-fuzz -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(fuzz.readers_build PROPERTIES LABELS fuzz TIMEOUT 1500 FIXTURES_SETUP fuzz_readers
                     COST 400 SKIP_REGULAR_EXPRESSION "SKIPPED: ")
foreach(target ${greensched_fuzz_targets})
  add_test(NAME fuzz.reader_${target}
    COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DBINARY_DIR=${CMAKE_BINARY_DIR}
            -DBUILD_DIR=${CMAKE_CURRENT_BINARY_DIR}/readers-fuzz
            -DWORK=${CMAKE_CURRENT_BINARY_DIR}/readers-fuzz/${target} -DTARGET=${target}
            -DFUZZ_SECONDS=5 -P ${CMAKE_CURRENT_LIST_FILE})
  set_tests_properties(fuzz.reader_${target} PROPERTIES LABELS fuzz TIMEOUT 600
                       FIXTURES_REQUIRED fuzz_readers SKIP_REGULAR_EXPRESSION "SKIPPED: ")
endforeach()
