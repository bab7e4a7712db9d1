# scripts/scale-bench.sh on short windows, so that the scale benchmark of docs/PERFORMANCE.md
# keeps working: the replay of openb's node list repeated once and twice, once more for k = 1
# (same sha256: the hashes are of deterministic outputs), and a small fleet. Checks the sizes
# of the node lists it builds, the numbers it reads from the outputs against the files, the
# hashes against CMake's own, and that it refuses a work folder inside the repository. Run by
# ctest (label cli):
#   cmake -DGREENSCHED=<binary> -DSOURCE_DIR=<repo> -DWORK=<scratch dir> -DDATA=<shared data dir>
#         -P scale_bench_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/require_data.cmake)
set(source_nodes "${DATA}/openb/openb_node_list_gpu_node.csv")
foreach(f "${source_nodes}" "${DATA}/openb/openb_pod_list_default.csv"
          "${DATA}/carbon/emaps2023/DE-LU_2023_hourly.csv")
  require_shared_file("${f}" found)
  if(NOT found)
    return()
  endif()
endforeach()

file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(script "${SOURCE_DIR}/scripts/scale-bench.sh")
set(short --days 0.05 --warmup-days 0)

# bench(<name> <expected exit> args...): runs the script, its output in <name>_out.
function(bench name expected)
  execute_process(
    COMMAND ${CMAKE_COMMAND} -E env GREENSCHED_DATA=${DATA} GREENSCHED=${GREENSCHED}
            bash "${script}" ${ARGN}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL expected)
    message(FATAL_ERROR "scale-bench.sh ${ARGN}: exit ${rc}, expected ${expected}\n${out}\n${err}")
  endif()
  set(${name}_out "${out}\n${err}" PARENT_SCOPE)
endfunction()

function(check what)
  if(NOT (${ARGN}))
    message(FATAL_ERROR "${what}: ${ARGN}")
  endif()
endfunction()

# The source list: rows and GPUs.
file(STRINGS "${source_nodes}" lines)
list(POP_FRONT lines)
list(LENGTH lines source_rows)
set(source_gpus 0)
foreach(line IN LISTS lines)
  string(REPLACE "," ";" fields "${line}")
  list(GET fields 3 g)
  math(EXPR source_gpus "${source_gpus} + ${g}")
endforeach()
list(GET lines 0 first_line)
string(REGEX REPLACE ",.*" "" first_name "${first_line}")

# A CSV's first data row as <prefix>_<column> variables.
function(read_summary file prefix)
  file(STRINGS "${file}" rows)
  list(GET rows 0 header)
  list(GET rows 1 values)
  string(REPLACE "," ";" header "${header}")
  string(REPLACE "," ";" values "${values}")
  foreach(column value IN ZIP_LISTS header values)
    set(${prefix}_${column} "${value}" PARENT_SCOPE)
  endforeach()
endfunction()

# Replay, k = 1 and 2.
bench(replay 0 replay --k "1 2" ${short} --work "${WORK}/replay")
file(READ "${WORK}/replay/scale-bench.json" json)
string(JSON runs LENGTH "${json}" runs)
check("two runs" runs EQUAL 2)
foreach(i 0 1)
  math(EXPR k "${i} + 1")
  string(JSON nodes GET "${json}" runs ${i} nodes)
  string(JSON gpus GET "${json}" runs ${i} gpus)
  string(JSON pods GET "${json}" runs ${i} pods)
  string(JSON placed GET "${json}" runs ${i} pods_placed)
  string(JSON sha_${k} GET "${json}" runs ${i} sha256)
  string(JSON summary_sha GET "${json}" runs ${i} files summary.csv)
  string(JSON out GET "${json}" runs ${i} out)
  math(EXPR want_nodes "${k} * ${source_rows}")
  math(EXPR want_gpus "${k} * ${source_gpus}")
  check("k=${k} nodes" nodes EQUAL want_nodes)
  check("k=${k} GPUs" gpus EQUAL want_gpus)
  file(STRINGS "${WORK}/replay/nodes-x${k}.csv" list_lines)
  list(LENGTH list_lines n)
  math(EXPR want_lines "${want_nodes} + 1")
  check("k=${k} node list lines" n EQUAL want_lines)
  read_summary("${out}/summary.csv" s)
  check("k=${k} pods from summary.csv" pods EQUAL s_pods_total)
  check("k=${k} placed from summary.csv" placed EQUAL s_pods_started)
  check("k=${k} pods placed" placed GREATER 0 AND placed LESS_EQUAL pods)
  file(SHA256 "${out}/summary.csv" want_sha)
  check("k=${k} summary.csv sha256" summary_sha STREQUAL want_sha)
  check("k=${k} sha256" sha_${k} MATCHES "^[0-9a-f]+$")
  string(LENGTH "${sha_${k}}" sha_length)
  check("k=${k} sha256 length" sha_length EQUAL 64)
endforeach()
check("the table names the run" replay_out MATCHES "\n +2 +${want_nodes} +${want_gpus} ")
check("k=1 and k=2 give different outputs" NOT sha_1 STREQUAL sha_2)
# Copy c of the list names its nodes NAME-xc, in the source's order.
file(STRINGS "${WORK}/replay/nodes-x2.csv" x2)
list(GET x2 1 row_1)
list(GET x2 -1 row_last)
math(EXPR second_copy "${source_rows} + 1")
list(GET x2 ${second_copy} row_copy_2)
check("first node of copy 1" row_1 MATCHES "^${first_name}-x1,")
check("first node of copy 2" row_copy_2 MATCHES "^${first_name}-x2,")
check("last node of copy 2" row_last MATCHES "-x2,")

# The same run again gives the same hash.
bench(again 0 replay --k 1 ${short} --work "${WORK}/again")
file(READ "${WORK}/again/scale-bench.json" json)
string(JSON again_sha GET "${json}" runs 0 sha256)
check("the same run, the same sha256" again_sha STREQUAL sha_1)

# A fleet of 2 sites x 150 nodes.
bench(fleet 0 fleet --sites 2 --nodes-per-site 150 ${short} --work "${WORK}/fleet")
file(READ "${WORK}/fleet/scale-bench.json" json)
string(JSON nodes GET "${json}" runs 0 nodes)
string(JSON jobs GET "${json}" runs 0 jobs)
string(JSON out GET "${json}" runs 0 out)
check("fleet nodes" nodes EQUAL 300)
file(STRINGS "${WORK}/fleet/nodes-150.csv" list_lines)
list(LENGTH list_lines n)
check("fleet node list lines" n EQUAL 151)
read_summary("${out}/summary.csv" m)
check("fleet jobs from summary.csv" jobs EQUAL m_jobs)
check("fleet jobs" jobs GREATER 0)
foreach(f summary.csv timeline.csv decisions.csv energy_timeline.csv)
  string(JSON got GET "${json}" runs 0 files ${f})
  file(SHA256 "${out}/${f}" want)
  check("fleet ${f} sha256" got STREQUAL want)
endforeach()

# Refused: a work folder inside the repository (nothing is created there), a bad k.
bench(inside 2 replay --k 1 --work "${SOURCE_DIR}/scale-bench-work-must-not-exist")
check("no folder made in the repository" NOT EXISTS "${SOURCE_DIR}/scale-bench-work-must-not-exist")
bench(bad_k 2 replay --k "1 x")
message("scale-bench.sh: replay k=1,2, repeat, fleet and refusals as expected\n${replay_out}")
