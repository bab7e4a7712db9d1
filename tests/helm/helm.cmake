# The Helm chart's tests (ctest label helm), run as a script, one step each:
#   cmake -DSOURCE_DIR=<repo> -DWORK=<scratch dir> -DSTEP=<step> -P helm.cmake
# STEP build: builds helm from the Go module tests/helm/go.mod pins (helm.sh/helm/v3 v3.22.0,
#   from the Go module proxy) into WORK/bin with tests/helm/build.sh. Go's build and module
#   caches are the user's defaults, shared with the tree's other Go builds (a cold build is
#   about 4 minutes on 2 cores).
# STEP lint, lint-strict: helm lint deploy/helm/greensched (--strict: warnings fail too).
# STEP template: helm template with the default values and with each tests/helm/values-*.yaml
#   (every component and option on; everything from existing objects), written to WORK.
# STEP manifests: tests/deploy_manifest's TestHelmChart decodes those renderings strictly and
#   checks their references, TLS, token, replicas, leader election, NetworkPolicies and the
#   descheduler CronJob; TestHelmChartDescheduler, the descheduler with PEM values, over
#   plain HTTP, and the combinations the chart refuses; and TestHelmChartRBACMatchesKueueManifest, that
#   deploy/kueue/greensched-kueue.yaml grants greensched-kueue what the chart does.
# Skips with a message when Go 1.26 or the modules (no network) are missing, or, after the
# build step skipped, when helm is not built; fails instead when CI=true.
include(${CMAKE_CURRENT_LIST_DIR}/../script_skip.cmake)

set(chart "${SOURCE_DIR}/deploy/helm/greensched")
set(helm "${WORK}/bin/helm")

find_program(GO NAMES go PATHS /usr/local/go/bin NO_DEFAULT_PATH)
if(NOT GO)
  find_program(GO NAMES go)
endif()
if(GO)
  execute_process(COMMAND ${GO} env GOVERSION OUTPUT_VARIABLE go_version
                  OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc ERROR_QUIET)
  string(REGEX MATCH "^go([0-9]+)\\.([0-9]+)" _ "${go_version}")
  if(NOT rc EQUAL 0 OR NOT CMAKE_MATCH_1 EQUAL 1 OR CMAKE_MATCH_2 LESS 26)
    set(old_go "${GO} is ${go_version}")
    unset(GO)
  endif()
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

if(STEP STREQUAL "build")
  if(NOT GO)
    skip_or_fail("Go 1.26 or later is missing (helm v3.22 needs it; looked in /usr/local/go/bin and PATH) ${old_go}")
    return()
  endif()
  # Loading the packages fetches the modules: without the proxy (and without them in the
  # module cache), this is the step that fails.
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${go_env} ${GO} list -deps helm.sh/helm/v3/cmd/helm
    WORKING_DIRECTORY "${SOURCE_DIR}/tests/helm" RESULT_VARIABLE rc OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    if(err MATCHES "dial tcp|no such host|connection refused|i/o timeout|network is unreachable|TLS handshake|GOPROXY=off|proxy.golang.org")
      skip_or_fail("the Go modules of tests/helm/go.mod could not be downloaded:\n${err}")
      return()
    endif()
    message(FATAL_ERROR "go list in tests/helm failed:\n${err}")
  endif()
  file(REMOVE "${helm}")
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${go_env} GO=${GO} bash ${SOURCE_DIR}/tests/helm/build.sh ${WORK}/bin
    RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "building helm failed (exit ${rc})")
  endif()
  return()
endif()

if(NOT EXISTS "${helm}")
  skip_or_fail("helm is not built at ${helm} (the helm.build test skipped or failed)")
  return()
endif()

function(run_helm what)
  execute_process(COMMAND ${helm} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what}: helm ${ARGN} exited ${rc}\n${out}\n${err}")
  endif()
  set(helm_out "${out}" PARENT_SCOPE)
  if(STEP MATCHES "^lint")
    message("${out}${err}")
  elseif(err)
    message("${err}")
  endif()
endfunction()

if(STEP STREQUAL "lint")
  run_helm("lint" lint ${chart})
elseif(STEP STREQUAL "lint-strict")
  run_helm("lint --strict" lint --strict ${chart})
  # The same with every option on, and with everything from existing objects.
  file(GLOB values_files "${SOURCE_DIR}/tests/helm/values-*.yaml")
  foreach(values ${values_files})
    run_helm("lint --strict -f ${values}" lint --strict ${chart} -f ${values})
  endforeach()
elseif(STEP STREQUAL "template")
  file(MAKE_DIRECTORY "${WORK}/rendered")
  run_helm("template (default values)" template gs ${chart} --namespace greensched-system)
  file(WRITE "${WORK}/rendered/default.yaml" "${helm_out}")
  file(GLOB values_files "${SOURCE_DIR}/tests/helm/values-*.yaml")
  foreach(values ${values_files})
    get_filename_component(name "${values}" NAME)
    run_helm("template -f ${name}" template gs ${chart} --namespace greensched-system -f ${values})
    file(WRITE "${WORK}/rendered/${name}" "${helm_out}")
  endforeach()
  message("rendered into ${WORK}/rendered")
elseif(STEP STREQUAL "manifests")
  if(NOT GO)
    skip_or_fail("Go 1.26 or later is missing ${old_go}")
    return()
  endif()
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env ${go_env} "GOFLAGS=-mod=readonly -buildvcs=false -trimpath"
            HELM=${helm} REPO_DIR=${SOURCE_DIR}
            ${GO} test -count=1 -v -run TestHelmChart ./...
    WORKING_DIRECTORY "${SOURCE_DIR}/tests/deploy_manifest" RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "the rendered chart failed its checks (tests/deploy_manifest/helm_test.go)")
  endif()
else()
  message(FATAL_ERROR "STEP must be build, lint, lint-strict, template or manifests")
endif()
