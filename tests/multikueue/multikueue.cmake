# The MultiKueue end-to-end test (ctest label multikueue), run as a script:
#   cmake -DSOURCE_DIR=<repo> -DWORK=<scratch dir> -DDATA=<shared data dir>
#         -DGREENSCHED=<binary> -DGO=<go 1.25+> -DHELM=<helm binary> -P multikueue.cmake
# Builds the clusters' binaries from the Go modules tests/multikueue pins (build.sh; Go's build
# cache keeps rebuilds to seconds), then runs the test program (tests/multikueue/e2e) against
# the greensched binary, installed on the manager (dispatch, greensched-kueue) and on each
# worker (the extender and its kube-scheduler) from the Helm chart deploy/helm/greensched as
# helm renders it (HELM: the helm.build test builds it, the fixture helm_binary), and from
# deploy/kueue. Skips with a message when the shared data, Go or helm is
# missing, unless CI=true.
include(${CMAKE_CURRENT_LIST_DIR}/../script_skip.cmake)

# SCENARIO: main (the default: 200 Jobs while the dispatcher and the service are killed and a
# worker goes away for a minute) or faults (60 Jobs; see tests/multikueue/e2e/faults.go).
if(NOT SCENARIO)
  set(SCENARIO main)
endif()
set(scenario_args -scenario ${SCENARIO})
# The faults scenario's workers run at the manager's priority: their own timeouts (a copy's
# pods must be ready within 20 s, else the worker's Kueue evicts it) are under test there, and
# workers held back by a niceness miss them and churn (measured: twice the decisions, jobs
# unfinished after 5 min). Its six clusters' control planes then share the 2 cores with the
# manager's, so its nominations are held to p99 2 s and max 3 s (measured 0.43-0.67 s, outside
# a takeover and its catch-up); the
# service's decisions keep their 1 s / 2 s bounds, and the main scenario's nominations 1 s / 2 s.
if(SCENARIO STREQUAL "faults")
  list(APPEND scenario_args -jobs 60 -submit-for 60s -worker-nice 0 -max-nomination-p99 2s
       -max-nomination-max 3s)
endif()
foreach(file openb/openb_node_list_gpu_node.csv openb/openb_pod_list_default.csv
        carbon/emaps2023/DE-LU_2023_hourly.csv carbon/emaps2023/GB_2023_hourly.csv
        carbon/emaps2023/CA-ON_2023_hourly.csv carbon/emaps2023/US-CAL-CISO_2023_hourly.csv
        carbon/emaps2023/BR-SP_2023_hourly.csv)
  if(NOT EXISTS "${DATA}/${file}")
    skip_or_fail("the shared data is missing at ${DATA}/${file}")
    return()
  endif()
endforeach()
if(NOT GO OR NOT EXISTS "${GO}")
  skip_or_fail("Go 1.26 or newer is missing (it builds Kubernetes, Kueue and KWOK from modules)")
  return()
endif()
if(NOT HELM OR NOT EXISTS "${HELM}")
  skip_or_fail("helm is not built at ${HELM} (the helm.build test skipped or failed); it renders the chart the test installs")
  return()
endif()

set(here "${SOURCE_DIR}/tests/multikueue")
set(bin "${WORK}/bin")
string(TIMESTAMP t0 "%s")
execute_process(COMMAND ${CMAKE_COMMAND} -E env GO=${GO} GOFLAGS=-mod=readonly
                        bash ${here}/build.sh ${bin}
                RESULT_VARIABLE rc)
string(TIMESTAMP t1 "%s")
math(EXPR build_s "${t1} - ${t0}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the multikueue test's binaries failed (exit ${rc})")
endif()
message("built the clusters' binaries in ${build_s} s")

execute_process(
  COMMAND ${bin}/greensched-multikueue-e2e -bin ${bin} -greensched ${GREENSCHED} -data ${DATA}
          -work ${WORK}/run -go ${GO} -module ${here}
          -deploy ${SOURCE_DIR}/deploy -helm ${HELM} ${scenario_args}
  RESULT_VARIABLE rc)
string(TIMESTAMP t2 "%s")
math(EXPR run_s "${t2} - ${t1}")
message("build ${build_s} s, run ${run_s} s; measurements in ${WORK}/run/result.json")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the multikueue end-to-end test (${SCENARIO}) failed (exit ${rc}); logs in ${WORK}/run/logs")
endif()
