# The kube-scheduler 1.35.4 end-to-end test (ctest kube.scheduler_1_35_e2e, label kube), run as
# a script:
#   cmake -DSOURCE_DIR=<repo> -DWORK=<scratch dir> -DDATA=<shared data dir>
#         -DGREENSCHED=<binary> -P kube_e2e_1_35.cmake
# The program of kube_e2e.cmake (main.go, harness.go) with k8s-1.35/k8s.go in place of
# k8s-1.20/k8s.go, built as the Go module k8s-1.35/go.mod pins (k8s.io/kubernetes v1.35.4 and its
# staging modules at v0.35.4, from the Go module proxy) in WORK/src, then run with the v1
# configs: tests/kube_e2e/scheduler-config-v1.yaml and deploy/scheduler-config.yaml. Go's build
# and module caches are the user's defaults (~/.cache/go-build, ~/go/pkg/mod), shared with the
# tree's other Go builds. Skips with a message when the openb data, Go 1.25 or later, or the
# modules (no network) are missing, unless CI=true.
#   -DTIDY=ON: only runs go mod tidy on the assembled module and writes its go.mod and go.sum
#   back to tests/kube_e2e/k8s-1.35/ (after a change of imports or versions).
include(${CMAKE_CURRENT_LIST_DIR}/../script_skip.cmake)

if(NOT TIDY)
  foreach(csv openb_node_list_gpu_node.csv openb_pod_list_default.csv)
    if(NOT EXISTS "${DATA}/openb/${csv}")
      skip_or_fail("the openb data is missing at ${DATA}/openb/${csv}")
      return()
    endif()
  endforeach()
endif()
find_program(GO NAMES go PATHS /usr/local/go/bin NO_DEFAULT_PATH)
if(NOT GO)
  find_program(GO NAMES go)
endif()
if(GO)
  execute_process(COMMAND ${GO} env GOVERSION OUTPUT_VARIABLE go_version
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCH "^go([0-9]+)\\.([0-9]+)" _ "${go_version}")
  if(NOT rc EQUAL 0 OR NOT CMAKE_MATCH_1 EQUAL 1 OR CMAKE_MATCH_2 LESS 25)
    set(old_go "${GO} is ${go_version}")
    unset(GO)
  endif()
endif()
if(NOT GO)
  skip_or_fail("Go 1.25 or later is missing (k8s.io/kubernetes v1.35 needs it; looked in /usr/local/go/bin and PATH) ${old_go}")
  return()
endif()

# The flags of tests/multikueue/build.sh (-trimpath is part of the build cache's keys), and
# -mod=mod so that go.sum may be completed. Without HOME (or XDG_CACHE_HOME), Go has no default
# cache: then the caches go under WORK.
set(go_env "GOFLAGS=-mod=mod -buildvcs=false -trimpath")
if("$ENV{HOME}" STREQUAL "" AND "$ENV{XDG_CACHE_HOME}" STREQUAL "" AND "$ENV{GOCACHE}" STREQUAL "")
  list(APPEND go_env GOCACHE=${WORK}/go-cache)
endif()
if("$ENV{HOME}" STREQUAL "" AND "$ENV{GOPATH}" STREQUAL "" AND "$ENV{GOMODCACHE}" STREQUAL "")
  list(APPEND go_env GOPATH=${WORK}/go-path)
endif()

# The module: the shared files and 1.35's (copied only when changed).
set(src "${WORK}/src")
file(MAKE_DIRECTORY "${src}")
foreach(go_file main.go harness.go k8s-1.35/k8s.go k8s-1.35/go.mod k8s-1.35/go.sum)
  get_filename_component(name "${go_file}" NAME)
  configure_file("${SOURCE_DIR}/tests/kube_e2e/${go_file}" "${src}/${name}" COPYONLY)
endforeach()

if(TIDY)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${go_env} ${GO} mod tidy
                  WORKING_DIRECTORY "${src}" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "go mod tidy failed in ${src}")
  endif()
  foreach(name go.mod go.sum)
    configure_file("${src}/${name}" "${SOURCE_DIR}/tests/kube_e2e/k8s-1.35/${name}" COPYONLY)
  endforeach()
  message("tidied: tests/kube_e2e/k8s-1.35/go.mod and go.sum")
  return()
endif()

# Loading the packages fetches the modules the build needs: without the proxy (and without
# them in the module cache), this is the step that fails.
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ${go_env} ${GO} list -deps .
  WORKING_DIRECTORY "${src}" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  if(err MATCHES "dial tcp|no such host|connection refused|i/o timeout|network is unreachable|TLS handshake|GOPROXY=off|proxy.golang.org")
    skip_or_fail("the Go modules of tests/kube_e2e/k8s-1.35/go.mod could not be downloaded:\n${err}")
    return()
  endif()
  message(FATAL_ERROR "go list in ${src} failed:\n${err}")
endif()

set(program "${WORK}/greensched-kube-e2e")
string(TIMESTAMP t0 "%s")
execute_process(
  COMMAND ${CMAKE_COMMAND} -E env ${go_env} ${GO} build -o ${program} .
  WORKING_DIRECTORY "${src}"
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
string(TIMESTAMP t1 "%s")
math(EXPR build_s "${t1} - ${t0}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "go build of tests/kube_e2e for kube-scheduler 1.35.4 failed:\n${out}\n${err}")
endif()
message("go build (kube-scheduler 1.35.4): ${build_s} s (${GO}, ${go_version})")

execute_process(
  COMMAND ${program} -greensched ${GREENSCHED}
          -nodes ${DATA}/openb/openb_node_list_gpu_node.csv
          -pods ${DATA}/openb/openb_pod_list_default.csv
          -config ${SOURCE_DIR}/tests/kube_e2e/scheduler-config-v1.yaml
          -deploy-config ${SOURCE_DIR}/deploy/scheduler-config.yaml
          -work ${WORK}/run
  RESULT_VARIABLE rc)
string(TIMESTAMP t2 "%s")
math(EXPR run_s "${t2} - ${t1}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the kube-scheduler 1.35.4 end-to-end test failed (exit ${rc}, ${run_s} s); logs in ${WORK}/run")
endif()
message("the cases ran in ${run_s} s")
