# Tests of learn/: the allocation bound and the offline packing beside it, the online target
# workload, the learned policy and its training. Unit tests join greensched_unit_tests (also run under ASan+UBSan); the bound on the
# real trace is a separate executable labelled repro.
target_sources(greensched_unit_tests PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/learn_bound_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/learn_packing_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/learn_online_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/learn_policy_test.cpp
  ${CMAKE_CURRENT_LIST_DIR}/learn_train_test.cpp
)

add_executable(greensched_learn_repro_test ${CMAKE_CURRENT_LIST_DIR}/learn_repro_test.cpp)
target_link_libraries(greensched_learn_repro_test PRIVATE greensched_lib GTest::gtest_main)
target_compile_definitions(greensched_learn_repro_test PRIVATE
  GREENSCHED_SHARED_DATA="${GREENSCHED_SHARED_DATA}" GREENSCHED_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
gtest_discover_tests(greensched_learn_repro_test PROPERTIES LABELS repro DISCOVERY_TIMEOUT 60)
