# Tests of the monitor subsystem (node agent, workload profiler, job prediction, calibration).
# Unit tests join greensched_unit_tests (label unit, also built under ASan); the NVML path is
# tested against a stand-in libnvidia-ml built here; the commands are run as a user runs them
# (labels monitor and cli).
add_library(greensched_fake_nvml SHARED monitor_fake_nvml.cpp)
set_target_properties(greensched_fake_nvml PROPERTIES OUTPUT_NAME greensched-fake-nvml
                      CXX_VISIBILITY_PRESET hidden)

target_sources(greensched_unit_tests PRIVATE
  monitor_proc_test.cpp
  monitor_agent_test.cpp
  monitor_nvml_test.cpp
  monitor_profile_test.cpp
  monitor_calibrate_test.cpp
  monitor_predict_test.cpp
)
add_dependencies(greensched_unit_tests greensched_fake_nvml)
target_compile_definitions(greensched_unit_tests PRIVATE
  GREENSCHED_FAKE_NVML="$<TARGET_FILE:greensched_fake_nvml>")

add_executable(greensched_monitor_cli_tests monitor_cli_test.cpp)
target_link_libraries(greensched_monitor_cli_tests PRIVATE nlohmann_json::nlohmann_json fmt::fmt
                      GTest::gtest_main)
add_dependencies(greensched_monitor_cli_tests greensched greensched_fake_nvml)
target_compile_definitions(greensched_monitor_cli_tests PRIVATE
  GREENSCHED_SHARED_DATA="${GREENSCHED_SHARED_DATA}"
  GREENSCHED_BINARY="$<TARGET_FILE:greensched>"
  GREENSCHED_FAKE_NVML="$<TARGET_FILE:greensched_fake_nvml>")
gtest_discover_tests(greensched_monitor_cli_tests TEST_PREFIX monitor_cli.
                     PROPERTIES LABELS "monitor;cli" DISCOVERY_TIMEOUT 60)
