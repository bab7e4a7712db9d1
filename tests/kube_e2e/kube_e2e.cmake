# The kube-scheduler 1.20.5 end-to-end test (ctest label kube), run as a script:
#   cmake -DSOURCE_DIR=<repo> -DWORK=<scratch dir> -DDATA=<shared data dir>
#         -DGREENSCHED=<binary> -P kube_e2e.cmake
# Untars the vendored Kubernetes tree into WORK (once), builds tests/kube_e2e's Go program
# inside it offline (Go's build cache under WORK keeps rebuilds to seconds), then runs it
# against the greensched binary. Skips with a message when the tarball or Go is missing,
# unless CI=true.
include(${CMAKE_CURRENT_LIST_DIR}/../script_skip.cmake)

get_filename_component(shared "${DATA}/.." ABSOLUTE)
set(tarball "${shared}/third_party/kss-k8s-1.20.5-vendor.tar.gz")
if(NOT EXISTS "${tarball}")
  skip_or_fail("the vendored Kubernetes 1.20.5 sources are missing at ${tarball}")
  return()
endif()
foreach(csv openb_node_list_gpu_node.csv openb_pod_list_default.csv)
  if(NOT EXISTS "${DATA}/openb/${csv}")
    skip_or_fail("the openb data is missing at ${DATA}/openb/${csv}")
    return()
  endif()
endforeach()
find_program(GO NAMES go PATHS /usr/lib/go-1.19/bin NO_DEFAULT_PATH)
if(NOT GO)
  find_program(GO NAMES go go-1.19)
endif()
if(NOT GO)
  skip_or_fail("Go is missing (Debian: apt-get install golang-1.19-go, or make deps)")
  return()
endif()

set(tree "${WORK}/kss-k8s-1.20.5")
set(stamp "${WORK}/untarred.stamp")
if(NOT EXISTS "${stamp}" OR "${tarball}" IS_NEWER_THAN "${stamp}")
  file(REMOVE_RECURSE "${tree}")
  file(MAKE_DIRECTORY "${WORK}")
  message("untarring ${tarball} into ${WORK}")
  file(ARCHIVE_EXTRACT INPUT "${tarball}" DESTINATION "${WORK}")
  file(TOUCH "${stamp}")
endif()

# Our program goes in as cmd/greensched-kube-e2e (copied only when changed): the shared files
# and 1.20's (kube_e2e_1_35.cmake builds the same with k8s-1.35/k8s.go).
set(cmd "${tree}/cmd/greensched-kube-e2e")
file(MAKE_DIRECTORY "${cmd}")
foreach(go_file main.go harness.go k8s-1.20/k8s.go)
  get_filename_component(name "${go_file}" NAME)
  configure_file("${SOURCE_DIR}/tests/kube_e2e/${go_file}" "${cmd}/${name}" COPYONLY)
endforeach()
set(program "${WORK}/greensched-kube-e2e")
string(TIMESTAMP t0 "%s")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env CGO_ENABLED=0 GOFLAGS=-mod=vendor GOPROXY=off
          GOCACHE=${WORK}/go-cache GOPATH=${WORK}/go-path GO111MODULE=on
          ${GO} build -o ${program} ./cmd/greensched-kube-e2e
  WORKING_DIRECTORY "${tree}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP t1 "%s")
math(EXPR build_s "${t1} - ${t0}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go build of tests/kube_e2e failed:\n${out}\n${err}")
endif()
message("go build ./cmd/greensched-kube-e2e: ${build_s} s (${GO})")

execute_process(
  COMMAND ${program} -greensched ${GREENSCHED}
          -nodes ${DATA}/openb/openb_node_list_gpu_node.csv
          -pods ${DATA}/openb/openb_pod_list_default.csv
          -config ${SOURCE_DIR}/tests/kube_e2e/scheduler-config.yaml
          -deploy-config ${SOURCE_DIR}/deploy/scheduler-config-v1beta1.yaml
          -work ${WORK}/run
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the kube-scheduler end-to-end test failed (exit ${rc}); logs in ${WORK}/run")
endif()
