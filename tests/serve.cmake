# Tests of the serve/ subsystem (greensched serve, the Kubernetes scheduler extender).
#
# Included by tests/CMakeLists.txt, and also run as a script (cmake -P serve.cmake) by the fuzz
# test: then it builds the libFuzzer target with clang in its own directory and fuzzes the
# request parser for FUZZ_SECONDS, so a missing clang never breaks the GCC build.

if(CMAKE_SCRIPT_MODE_FILE)
  # --- script mode: the fuzz test (label fuzz) --------------------------------------------
  include(${CMAKE_CURRENT_LIST_DIR}/fuzz_build.cmake)
  file(MAKE_DIRECTORY ${WORK}/corpus)
  set(sources
    ${SOURCE_DIR}/tests/serve_fuzz.cpp
    ${SOURCE_DIR}/src/greensched/serve/quantity.cpp
    ${SOURCE_DIR}/src/greensched/serve/gpu_index.cpp
    ${SOURCE_DIR}/src/greensched/serve/json_fields.cpp
    ${SOURCE_DIR}/src/greensched/serve/json_text.cpp
    ${SOURCE_DIR}/src/greensched/serve/pod_request.cpp
    ${SOURCE_DIR}/src/greensched/serve/node_object.cpp
    ${SOURCE_DIR}/src/greensched/core/gpu_model.cpp
    ${SOURCE_DIR}/src/greensched/core/json_fields.cpp
    ${SOURCE_DIR}/src/greensched/serve/extender_protocol.cpp
    ${SOURCE_DIR}/src/greensched/serve/args_reader.cpp)
  greensched_fuzz_binary(binary BINARY ${WORK}/serve_fuzz SOURCES ${sources}
    ALONE ${SOURCE_DIR}/src/greensched/serve/args_reader.cpp
    WATCH ${SOURCE_DIR}/src/greensched/serve/extender_protocol.hpp
          ${SOURCE_DIR}/src/greensched/serve/pod_request.hpp
          ${SOURCE_DIR}/src/greensched/serve/args_reader.hpp)
  if(NOT binary)
    return()
  endif()
  # Seeds: one per parser (the first byte picks it; see serve_fuzz.cpp); inputs that once
  # failed are kept in tests/fuzz/corpus/serve_request_parser/ and read from there.
  file(WRITE ${WORK}/corpus/seed-filter
       "f{\"Pod\":{\"metadata\":{\"name\":\"p\",\"namespace\":\"ns\",\"uid\":\"u\",\"annotations\":{\"alibabacloud.com/gpu-card-model\":\"T4|A10\"}},\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"cpu\":\"1500m\",\"memory\":\"1Gi\",\"alibabacloud.com/gpu-milli\":\"500\"},\"requests\":{\"cpu\":\"1\"}}}],\"initContainers\":[{\"resources\":{\"requests\":{\"cpu\":\"2\"}}}]}},\"NodeNames\":[\"a\",\"b\"]}")
  file(WRITE ${WORK}/corpus/seed-nodes
       "f{\"Pod\":{\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":[{\"resources\":{\"limits\":{\"nvidia.com/gpu\":\"2\",\"nvidia.com/gpumem-percentage\":\"100\"}}}]}},\"Nodes\":{\"items\":[{\"metadata\":{\"name\":\"n\",\"labels\":{\"alibabacloud.com/gpu-card-model\":\"V100M16\"}},\"status\":{\"allocatable\":{\"cpu\":\"32\",\"memory\":\"128Gi\",\"alibabacloud.com/gpu-count\":\"8\"}}}]}}")
  file(WRITE ${WORK}/corpus/seed-bind
       "b{\"PodName\":\"p\",\"PodNamespace\":\"ns\",\"PodUID\":\"u\",\"Node\":\"n\"}")
  file(WRITE ${WORK}/corpus/seed-resync
       "r{\"Pods\":[{\"namespace\":\"ns\",\"name\":\"a\",\"node\":\"n\",\"cpu\":\"500m\",\"memory\":\"1Gi\",\"gpu_milli\":250,\"gpu_count\":1,\"gpu_indices\":\"0-1\",\"gpu_models\":\"T4\"}]}")
  file(WRITE ${WORK}/corpus/seed-quantity "q1.5Gi")
  file(WRITE ${WORK}/corpus/seed-index "i0-1-7")
  greensched_fuzz_run(BINARY ${binary} WORK ${WORK} SECONDS ${FUZZ_SECONDS} MAX_LEN 65536
    CORPUS ${WORK}/corpus ${SOURCE_DIR}/tests/fuzz/corpus/serve_request_parser
    FAILURE "the fuzzer found a failing input: see ${WORK}/crash-* (or leak-*, timeout-*); "
            "fix it and keep it in tests/fuzz/corpus/serve_request_parser/")
  return()
endif()

# --- configure mode ---------------------------------------------------------------------------

# Parsing, state and journal, the HTTP contract and bad input: fast, also built under ASan.
target_sources(greensched_unit_tests PRIVATE
  serve_parse_test.cpp
  serve_state_test.cpp
  serve_contract_test.cpp
  serve_reply_text_test.cpp
  serve_bad_input_test.cpp
  serve_watch_test.cpp
  serve_defrag_test.cpp
  listener_security_test.cpp
)

# Load: filter + prioritize + bind for 10,000 pods on the 1213-node openb cluster from 8
# concurrent connections (label serve).
add_executable(greensched_serve_load_test serve_load_test.cpp)
target_link_libraries(greensched_serve_load_test PRIVATE greensched_lib GTest::gtest_main)
target_compile_definitions(greensched_serve_load_test PRIVATE
  GREENSCHED_SHARED_DATA="${GREENSCHED_SHARED_DATA}" GREENSCHED_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_test(NAME serve.load_10000_pods COMMAND greensched_serve_load_test)
set_tests_properties(serve.load_10000_pods PROPERTIES LABELS serve TIMEOUT 600)

# Crash safety: the real binary, SIGKILLed at random points and restarted (label serve).
add_executable(greensched_serve_crash_test serve_crash_test.cpp)
target_link_libraries(greensched_serve_crash_test PRIVATE greensched_lib GTest::gtest_main)
target_compile_definitions(greensched_serve_crash_test PRIVATE
  GREENSCHED_BINARY="$<TARGET_FILE:greensched>")
add_dependencies(greensched_serve_crash_test greensched)
add_test(NAME serve.crash_recovery COMMAND greensched_serve_crash_test)
set_tests_properties(serve.crash_recovery PROPERTIES LABELS serve TIMEOUT 600)

# Fuzzing the request parser for 60 s with libFuzzer (label fuzz); skipped without clang
# unless CI=true.
add_test(NAME fuzz.serve_request_parser
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/serve-fuzz -DFUZZ_SECONDS=15
          -P ${CMAKE_CURRENT_LIST_FILE})
set_tests_properties(fuzz.serve_request_parser PROPERTIES LABELS fuzz TIMEOUT 900 COST 500
                     SKIP_REGULAR_EXPRESSION "SKIPPED: ")

# Kubernetes' own scheduler (1.20.5, vendored in ../shared/third_party) driving the real
# binary: the whole openb pod list, both nodeCacheCapable modes, SIGKILLs, bad and slow
# extender behaviour, throughput, TLS, and greensched deschedule's evictions (label kube; see
# tests/kube_e2e). Skipped without the
# tarball or Go unless CI=true.
add_test(NAME kube.scheduler_1_20_e2e
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR} -DWORK=${CMAKE_CURRENT_BINARY_DIR}/kube-e2e
          -DDATA=${GREENSCHED_SHARED_DATA} -DGREENSCHED=$<TARGET_FILE:greensched>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/kube_e2e/kube_e2e.cmake)
# It mostly waits on the scheduler's queue and HTTP round trips, so it runs beside the
# fuzzers; COST starts it first, being the longest. The timeout covers a cold build of the
# vendored scheduler beside the 1.35 test's (about 4 min on 2 cores) and the cases (about 6 min).
set_tests_properties(kube.scheduler_1_20_e2e PROPERTIES LABELS kube TIMEOUT 1200 COST 1000
                     SKIP_REGULAR_EXPRESSION "SKIPPED: ")

# The same program against upstream kube-scheduler 1.35.4 (Go modules of
# tests/kube_e2e/k8s-1.35/go.mod, from the Go module proxy), configured in
# kubescheduler.config.k8s.io/v1 as deploy/scheduler-config.yaml is. Skipped without the openb
# data, Go 1.25+ or the modules unless CI=true. The timeout covers a cold build of the
# scheduler's packages on 2 cores (several minutes) and the cases (about 2.5 min).
add_test(NAME kube.scheduler_1_35_e2e
  COMMAND ${CMAKE_COMMAND} -DSOURCE_DIR=${CMAKE_SOURCE_DIR}
          -DWORK=${CMAKE_CURRENT_BINARY_DIR}/kube-e2e-1.35
          -DDATA=${GREENSCHED_SHARED_DATA} -DGREENSCHED=$<TARGET_FILE:greensched>
          -P ${CMAKE_CURRENT_SOURCE_DIR}/kube_e2e/kube_e2e_1_35.cmake)
set_tests_properties(kube.scheduler_1_35_e2e PROPERTIES LABELS kube TIMEOUT 1800 COST 900
                     SKIP_REGULAR_EXPRESSION "SKIPPED: ")
