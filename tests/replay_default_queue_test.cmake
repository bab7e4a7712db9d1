# Replay's default queue on the real trace, run by ctest (label replay):
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -DDATA=<shared data dir> [-DPOLICY=<list>]
#         -P replay_default_queue_test.cmake
# `greensched simulate --mode replay --load 70` on the openb GPU nodes and the gpuspec33 pod
# list, with the default queue (backfill, as kube-scheduler: a pod that fits nowhere does not
# hold up the ones behind it), leaves fewer than 1 % of the pods never started, for every
# policy run. Skipped with a message where ../shared/data is absent, failed under CI=true.
cmake_policy(SET CMP0007 NEW)  # list indices count empty CSV fields
include(${CMAKE_CURRENT_LIST_DIR}/require_data.cmake)
set(nodes "${DATA}/openb/openb_node_list_gpu_node.csv")
set(pods "${DATA}/openb/openb_pod_list_gpuspec33.csv")
require_shared_file("${nodes}" have_nodes)
require_shared_file("${pods}" have_pods)
if(NOT have_nodes OR NOT have_pods)
  return()
endif()
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

set(policy_args)
if(POLICY)
  set(policy_args --policy ${POLICY})
endif()
execute_process(COMMAND "${GREENSCHED}" simulate --mode replay --load 70 --nodes ${nodes}
                        --pods ${pods} ${policy_args} --out ${WORK}/out -q
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "greensched simulate --mode replay --load 70: exit ${rc}\n${out}\n${err}")
endif()
file(STRINGS "${WORK}/out/summary.csv" rows)
list(GET rows 0 header)
string(REPLACE "," ";" header "${header}")
list(FIND header policy c_policy)
list(FIND header queue c_queue)
list(FIND header pods_total c_total)
list(FIND header pods_never_started c_never)
list(LENGTH rows n)
if(n LESS 2)
  message(FATAL_ERROR "summary.csv has no rows")
endif()
math(EXPR last "${n} - 1")
foreach(i RANGE 1 ${last})
  list(GET rows ${i} row)
  string(REPLACE "," ";" row "${row}")
  list(GET row ${c_policy} policy)
  list(GET row ${c_queue} queue)
  list(GET row ${c_total} total)
  list(GET row ${c_never} never)
  if(NOT queue STREQUAL "backfill")
    message(FATAL_ERROR "${policy}: queue ${queue}, expected the default backfill")
  endif()
  # never / total < 1 %, in integers: 100 x never < total.
  math(EXPR hundred_never "100 * ${never}")
  message(STATUS "${policy}: ${never} of ${total} pods never started")
  if(NOT hundred_never LESS total)
    message(FATAL_ERROR "${policy}: ${never} of ${total} pods never started (1 % or more)")
  endif()
endforeach()
