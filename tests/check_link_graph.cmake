# The link graph CMake itself reports: configures the project into WORK with --graphviz and
# checks the links between greensched_<folder> libraries with check_layers.py (label layering).
#   cmake -DSOURCE_DIR=<source> -DWORK=<scratch dir> -DPYTHON=<python3> -DGENERATOR=<generator>
#         -P check_link_graph.cmake
file(REMOVE_RECURSE "${WORK}")
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK} -G ${GENERATOR} -DGREENSCHED_BENCHMARKS=OFF
          -DGREENSCHED_PCH=OFF --graphviz=${WORK}/graph/greensched.dot
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "configuring ${SOURCE_DIR} failed:\n${out}\n${err}")
endif()
execute_process(
  COMMAND ${PYTHON} ${SOURCE_DIR}/tests/check_layers.py --src ${SOURCE_DIR}/src
          --graphviz ${WORK}/graph/greensched.dot
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the link graph breaks the layering (see above)")
endif()
