# End-to-end checks of the greensched command line, run by ctest:
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -DDATA=<shared data dir> -P cli_test.cmake
include(${CMAKE_CURRENT_LIST_DIR}/require_data.cmake)
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# The shared-data rule itself: a missing file skips with a message, and fails under CI=true.
file(WRITE "${WORK}/require.cmake"
     "include(${CMAKE_CURRENT_LIST_DIR}/require_data.cmake)\n"
     "require_shared_file(\"${WORK}/absent.csv\" found)\n"
     "if(found)\n  message(FATAL_ERROR \"an absent file was found\")\nendif()\n")
foreach(ci false true)
  execute_process(COMMAND ${CMAKE_COMMAND} -E env CI=${ci} ${CMAKE_COMMAND} -P
                          "${WORK}/require.cmake"
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(ci AND (rc EQUAL 0 OR NOT err MATCHES "CI=true but the shared data file is missing"))
    message(FATAL_ERROR "require_shared_file under CI=true: exit ${rc}\n${out}\n${err}")
  elseif(NOT ci AND (NOT rc EQUAL 0 OR NOT out MATCHES "SKIPPED: shared data file not found"))
    message(FATAL_ERROR "require_shared_file without CI: exit ${rc}\n${out}\n${err}")
  endif()
endforeach()

# The built-in workload: a table on stdout and both CSVs.
expect_run(RESULT 0 ARGS simulate --policy fgd,random --seeds 1-2 --tune 1.1 --out ${WORK}/out
           OUT_MATCH "policy +seeds +alloc@90 +alloc@100.*\nfgd +2 .*\nrandom +2 ")
file(STRINGS "${WORK}/out/curves.csv" curves)
list(GET curves 0 header)
if(NOT header MATCHES "^policy,seed,arrived_gpu_pct,alloc_gpu_pct,frag_gpu_milli")
  message(FATAL_ERROR "curves.csv header: ${header}")
endif()
list(LENGTH curves rows)
if(NOT rows EQUAL 445)  # header + 2 policies x 2 seeds x bins 0..110
  message(FATAL_ERROR "curves.csv has ${rows} lines, expected 445")
endif()
file(STRINGS "${WORK}/out/summary.csv" summary)
list(GET summary 0 header)
if(NOT header MATCHES "^policy,seed,pods_arrived,pods_scheduled,pods_failed,alloc_gpu_pct_at_100")
  message(FATAL_ERROR "summary.csv header: ${header}")
endif()

# Same inputs and seed: byte-identical curves.
expect_run(RESULT 0 ARGS simulate --policy fgd,random --seeds 1-2 --tune 1.1 --out ${WORK}/again -q
           --jobs 1)
file(SHA256 "${WORK}/out/curves.csv" first)
file(SHA256 "${WORK}/again/curves.csv" second)
if(NOT first STREQUAL second)
  message(FATAL_ERROR "curves.csv differs between identical runs")
endif()

# JSON output.
expect_run(RESULT 0 ARGS simulate --policy bestfit --seeds 3 --tune 1.0 --json -q
           OUT_MATCH "\"policy\": \"bestfit\"")

# Bad arguments: non-zero exit and a message that says what was wrong.
expect_run(RESULT 2 ARGS simulate --policy nope -q ERR_MATCH "unknown policy 'nope'")
expect_run(RESULT 2 ARGS simulate --policy pwr:x+fgd -q ERR_MATCH "weight 'x'")
expect_run(RESULT 2 ARGS simulate --seeds 9-3 -q ERR_MATCH "LOW <= HIGH")
expect_run(RESULT 2 ARGS simulate --tune -1 -q ERR_MATCH "--tune")

# A bad pod list: file:line: reason, exit 1.
file(WRITE "${WORK}/nodes.csv" "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16000,2,T4\n")
file(WRITE "${WORK}/pods.csv"
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,1,500\np1,1000,100,2,500\n")
expect_run(RESULT 1 ARGS simulate --nodes ${WORK}/nodes.csv --pods ${WORK}/pods.csv -q
           ERR_MATCH "pods.csv:3: num_gpu 2 with gpu_milli 500")
expect_run(RESULT 2 ARGS simulate --nodes ${WORK}/nodes.csv -q ERR_MATCH "both --nodes and --pods")

# Power: a mix, the by-model table, and a bad power model naming the key.
expect_run(RESULT 0 ARGS simulate --policy pwr:200+fgd:800,fgd --seeds 1 --tune 1.0
           --report-power-by-model
           OUT_MATCH "pwr:200\\+fgd:800 +1 .*by the nodes' GPU model.*G2")
file(WRITE "${WORK}/power.json" "{\"gpus\": {\"T4\": {\"idle_watts\": 10}}, \"cpus\": {}, \"default_cpu\": \"x\"}")
expect_run(RESULT 1 ARGS simulate --power-model ${WORK}/power.json -q
           ERR_MATCH "power.json: gpus.T4.max_watts: missing")
expect_run(RESULT 1 ARGS simulate --policy pwr:1+fgd:1 --gpu-select bestfit -q
           ERR_MATCH "--gpu-select bestfit")

# Replay: a small timed trace; the built-in workload has no times.
file(WRITE "${WORK}/timed.csv"
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
     "a,1000,100,1,1000,,LS,Running,0,100,0\nb,1000,100,2,1000,,LS,Running,10,50,10\n"
     "c,1000,100,1,500,,BE,Running,20,30,20\n")
expect_run(RESULT 0 ARGS simulate --mode replay --nodes ${WORK}/nodes.csv --pods ${WORK}/timed.csv
           --policy fgd --queue fifo --out ${WORK}/replay OUT_MATCH "fgd +42 +61\\.7 +pwr +off .* 0\n")
file(STRINGS "${WORK}/replay/timeline.csv" timeline)
list(GET timeline 0 header)
if(NOT header STREQUAL "policy,seed,load_pct,gpu_power,power_down_idle_s,time_s,running_pods,queued_pods,allocated_gpus,power_watts,energy_joules,nodes_awake")
  message(FATAL_ERROR "timeline.csv header: ${header}")
endif()
expect_run(RESULT 2 ARGS simulate --mode replay -q ERR_MATCH "creation and deletion times")

# Replay at a controlled load on the built-in workload: policies x sleep x GPU power rule,
# the load columns, and byte-identical files for the same seed.
set(loaded_args simulate --mode replay --load 40 --days 1 --warmup-days 0.5 --queue backfill
    --policy fgd,fgd-energy --power-down-idle off,1800 --gpu-power pwr,proportional)
expect_run(RESULT 0 ARGS ${loaded_args} --out ${WORK}/loaded
           OUT_MATCH "fgd-energy +42 +4[0-9]\\.[0-9] +proportional +30m")
file(STRINGS "${WORK}/loaded/summary.csv" loaded_summary)
list(LENGTH loaded_summary loaded_rows)
if(NOT loaded_rows EQUAL 9)  # header + 2 policies x 2 sleep settings x 2 GPU rules
  message(FATAL_ERROR "loaded summary.csv has ${loaded_rows} lines, expected 9")
endif()
list(GET loaded_summary 0 header)
foreach(col offered_load_pct energy_kwh energy_floor_kwh kwh_per_gpu_hour ls_p99_delay_s
        be_p99_delay_s pods_never_started gpu_alloc_pct mean_nodes_awake)
  if(NOT ",${header}," MATCHES ",${col},")
    message(FATAL_ERROR "loaded summary.csv lacks ${col}: ${header}")
  endif()
endforeach()
expect_run(RESULT 0 ARGS ${loaded_args} --jobs 1 --out ${WORK}/loaded-again)
foreach(f summary timeline)
  file(SHA256 "${WORK}/loaded/${f}.csv" first)
  file(SHA256 "${WORK}/loaded-again/${f}.csv" second)
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "loaded ${f}.csv differs between identical runs")
  endif()
endforeach()
expect_run(RESULT 0 ARGS report --in ${WORK}/loaded)
file(READ "${WORK}/loaded/report.html" loaded_html)
if(NOT loaded_html MATCHES "table-replay-summary")
  message(FATAL_ERROR "the loaded replay report has no summary table")
endif()
expect_run(RESULT 2 ARGS simulate --mode replay --load 0 -q ERR_MATCH "--load: '0'")
expect_run(RESULT 2 ARGS simulate --mode replay --load 50 --power-down-idle soon -q
           ERR_MATCH "--power-down-idle: 'soon'")
expect_run(RESULT 2 ARGS simulate --mode replay --load 50 --gpu-power linear -q
           ERR_MATCH "unknown GPU power rule 'linear'")
expect_run(RESULT 2 ARGS simulate --load 50 -q ERR_MATCH "for --mode replay")
file(WRITE "${WORK}/events.csv" "time,node,event\n5,n0,down\n9,nosuch,up\n")
expect_run(RESULT 1 ARGS simulate --mode replay --nodes ${WORK}/nodes.csv --pods ${WORK}/timed.csv
           --node-events ${WORK}/events.csv -q ERR_MATCH "events.csv:3: .*nosuch")

# Decision records and explanations.
expect_run(RESULT 0 ARGS simulate --policy fgd --seeds 1 --tune 1.3 --record ${WORK}/decisions.jsonl -q)
expect_run(RESULT 0 ARGS explain --record ${WORK}/decisions.jsonl --failed 1
           OUT_MATCH "could not be placed\\.\n0/1213 nodes are available: ")
expect_run(RESULT 0 ARGS explain --record ${WORK}/decisions.jsonl --step 0
           OUT_MATCH "was placed on builtin-node-[0-9]+")
expect_run(RESULT 0 ARGS explain --record ${WORK}/decisions.jsonl --failed 1 --json
           OUT_MATCH "\"reason_counts\"")
expect_run(RESULT 2 ARGS explain --record ${WORK}/decisions.jsonl ERR_MATCH "exactly one of")
expect_run(RESULT 1 ARGS explain --record ${WORK}/decisions.jsonl --pod nosuch ERR_MATCH "no pod named nosuch; names look like builtin-pod-")
# One pod's story: every decision about it, in order.
set(failed_twice "{\"pod\":\"p\",\"step\":STEP,\"nodes_total\":1,\"chosen_node\":null,\"request\":{\"cpu_milli\":1000,\"memory_mib\":1,\"num_gpu\":0,\"gpu_milli\":0},\"reason_counts\":{\"insufficient cpu\":1}}\n")
string(REPLACE "STEP" "3" first "${failed_twice}")
string(REPLACE "STEP" "9" second "${failed_twice}")
file(WRITE ${WORK}/story.jsonl "${first}${second}")
expect_run(RESULT 0 ARGS explain --record ${WORK}/story.jsonl --pod p
           OUT_MATCH "Decision 1 of 2 about p \\(step 3\\):\n.*Decision 2 of 2 about p \\(step 9\\):")
expect_run(RESULT 1 ARGS explain --record ${WORK}/decisions.jsonl --failed 1 --policy nosuch
           ERR_MATCH "no decision of nosuch in this record")
expect_run(RESULT 0 ARGS explain --record ${WORK}/decisions.jsonl --step 0 --narrator-url http://127.0.0.1:1
           --narrator-model m OUT_MATCH "was placed on" ERR_MATCH "template text only")

# The allocation bound beside the offline packing (built-in workload, every policy): the packing
# is a real placement, so it never passes the LP bound, and on this workload it allocates more
# than every policy; the share of the LP gap it leaves is below 100 % for each.
execute_process(COMMAND "${GREENSCHED}" bound --seeds 1 --json -q RESULT_VARIABLE rc
                OUTPUT_VARIABLE bound_json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "bound --json: exit ${rc}\n${err}")
endif()
string(JSON lp GET "${bound_json}" upper_bound_alloc_pct)
string(JSON packing GET "${bound_json}" packing_alloc_pct)
string(JSON method GET "${bound_json}" seeds 0 packing_method)
string(JSON by_lp_rounding GET "${bound_json}" packing_by_method lp-rounding)
string(JSON policies LENGTH "${bound_json}" policies)
set(best_policy 0)
math(EXPR last "${policies} - 1")
foreach(i RANGE ${last})
  string(JSON alloc GET "${bound_json}" policies ${i} alloc_gpu_pct)
  string(JSON left GET "${bound_json}" policies ${i} lp_gap_left_by_packing_pct)
  if(alloc GREATER best_policy)
    set(best_policy ${alloc})
  endif()
  if(NOT (left GREATER_EQUAL 0 AND left LESS 100))
    message(FATAL_ERROR "bound: policy ${i} has lp_gap_left_by_packing_pct ${left}")
  endif()
endforeach()
if(NOT (packing GREATER best_policy AND packing LESS_EQUAL lp))
  message(FATAL_ERROR "bound: packing_alloc_pct ${packing} is not between the best policy "
                      "${best_policy} and upper_bound_alloc_pct ${lp}")
endif()
if(NOT method MATCHES "^(bfd|fgd-sorted|lp-rounding)$" OR by_lp_rounding GREATER packing)
  message(FATAL_ERROR "bound: packing_method ${method}, lp-rounding ${by_lp_rounding} % "
                      "against the best ${packing} %")
endif()
expect_run(RESULT 0 ARGS bound --seeds 1 --policy fgd
           OUT_MATCH "packing % method.*\n +1 +[0-9.]+ +[0-9.]+ +[0-9.]+ (bfd|fgd-sorted|lp-rounding) .*\noffline packing +[0-9.]+ .*\nbound +[0-9.]+")
# --no-packing: the bound and the policies only, as before the packing.
execute_process(COMMAND "${GREENSCHED}" bound --seeds 1 --policy fgd --json -q --no-packing
                RESULT_VARIABLE rc OUTPUT_VARIABLE plain_json)
string(JSON absent ERROR_VARIABLE no_packing GET "${plain_json}" packing_alloc_pct)
if(NOT rc EQUAL 0 OR NOT no_packing)
  message(FATAL_ERROR "bound --no-packing: exit ${rc}, packing_alloc_pct ${absent}")
endif()

# Multi-cluster: the built-in fleet and jobs, two agents, all three CSVs.
expect_run(RESULT 0 ARGS multi --agent local,green --load off --no-bound --days 5 --power-down-idle 1800
           --decisions --out ${WORK}/multi
           OUT_MATCH "agent +load % +slack +energy kWh.*\nlocal .*\ngreen ")
foreach(f summary timeline decisions)
  if(NOT EXISTS "${WORK}/multi/${f}.csv")
    message(FATAL_ERROR "multi did not write ${f}.csv")
  endif()
endforeach()
file(STRINGS "${WORK}/multi/summary.csv" multi_summary)
list(GET multi_summary 0 header)
if(NOT header MATCHES "^agent,energy_kwh,carbon_kg,mean_delay_s_ls,mean_delay_s_be,p99_delay_s_be,ls_slo_violations,jobs_moved,gb_moved,gpu_alloc_pct,jobs_never_started")
  message(FATAL_ERROR "multi summary.csv header: ${header}")
endif()
expect_run(RESULT 2 ARGS multi --agent nope -q ERR_MATCH "unknown agent 'nope'")

# Multi-cluster at a controlled fleet load, two slacks: one row per agent and slack, the same
# bytes for the same seed, and a report with the carbon-against-delay frontier.
set(multi_load_args multi --agent local,green --load 50 --days 1 --warmup-days 0.5 --slack 0,4
    --power-down-idle 1800)
# With --bound, the fleet bound of each slack and each run's share of its saving.
expect_run(RESULT 0 ARGS ${multi_load_args} --bound --out ${WORK}/multi-load
           OUT_MATCH "local +50\\.[0-9] +0h [^\n]*\ngreen +50\\.[0-9] +0h [^\n]*\nlocal +50\\.[0-9] +4h.*fleet bound.*slack 0 h: saves [0-9.]+ t \\([0-9.]+ t against [0-9.]+ t with every job at home; jobs without GPUs [0-9.]+ t of it\\).*slack 4 h: saves [0-9.]+ t.*\ngreen +50\\.[0-9] +0h +-[0-9.]+% +-[0-9.]+% +[0-9]+%")
expect_run(RESULT 0 ARGS ${multi_load_args} --bound --jobs 1 --out ${WORK}/multi-load-again)
foreach(f summary bound)
  file(SHA256 "${WORK}/multi-load/${f}.csv" first)
  file(SHA256 "${WORK}/multi-load-again/${f}.csv" second)
  if(NOT first STREQUAL second)
    message(FATAL_ERROR "multi ${f}.csv at load differs between identical runs")
  endif()
endforeach()
expect_run(RESULT 0 ARGS report --in ${WORK}/multi-load --out ${WORK}/multi-load)
file(READ "${WORK}/multi-load/report.html" multi_html)
if(NOT multi_html MATCHES "chart-multi-frontier-0")
  message(FATAL_ERROR "the multi report at load has no carbon-against-delay frontier")
endif()
# --bound-prices: green-plan once more, on the bound's capacity prices; --bound-schedule: the
# bound's own schedule run by the simulator (agent bound-schedule). Both only with --bound;
# the prices only with green-plan, the schedule only through --bound-schedule.
expect_run(RESULT 0 ARGS multi --agent local,green-plan --load 50 --days 1 --warmup-days 0.5
           --slack 0 --power-down-idle 1800 --bound --bound-prices --bound-schedule
           OUT_MATCH "green-plan \\(bound prices\\) +50\\.[0-9] +0h [^\n]*\nbound-schedule +[0-9.]+ +0h [^\n]*\n.*\ngreen-plan \\(bound prices\\) +50\\.[0-9] +0h +-[0-9.]+% +-[0-9.]+% +[0-9]+%")
expect_run(RESULT 2 ARGS multi --bound-prices --no-bound -q ERR_MATCH "--bound-prices needs the bound")
expect_run(RESULT 2 ARGS multi --bound-schedule --no-bound -q ERR_MATCH "--bound-schedule needs the bound")
expect_run(RESULT 2 ARGS multi --agent local,bound-schedule -q
           ERR_MATCH "use multi --bound --bound-schedule")
expect_run(RESULT 2 ARGS multi --agent local,green --bound --bound-prices -q
           ERR_MATCH "only green-plan plans with capacity prices")
# Site energy controllers on the built-in fleet (no on-site energy there, so every controller
# imports the demand): one summary row per agent and controller, an hourly energy timeline,
# the same bytes again, and a report with the site energy charts.
set(multi_energy_args multi --agent local,green-cost --load off --no-bound --days 2
    --energy-controller none,oracle --power-down-idle 1800)
expect_run(RESULT 0 ARGS ${multi_energy_args} --out ${WORK}/multi-energy
           OUT_MATCH "agent +ctrl +load %[^\n]*\nlocal +none [^\n]*\nlocal +oracle [^\n]*\ngreen-cost +none")
file(STRINGS "${WORK}/multi-energy/summary.csv" energy_summary)
list(LENGTH energy_summary energy_rows)
list(GET energy_summary 0 header)
if(NOT energy_rows EQUAL 5 OR NOT header MATCHES ",window_s,controller,cost_usd,grid_import_kwh,onsite_kwh_used,self_consumption_pct,battery_cycles")
  message(FATAL_ERROR "multi --energy-controller summary.csv: ${energy_rows} lines, header ${header}")
endif()
file(STRINGS "${WORK}/multi-energy/energy_timeline.csv" energy_tl LIMIT_COUNT 2)
list(GET energy_tl 0 header)
if(NOT header MATCHES "^agent,controller,site,hour_utc,demand_kwh,pv_kwh,wind_kwh,charge_kwh,discharge_kwh,soc,grid_import_kwh")
  message(FATAL_ERROR "energy_timeline.csv header: ${header}")
endif()
expect_run(RESULT 0 ARGS ${multi_energy_args} --jobs 1 --out ${WORK}/multi-energy-again)
file(SHA256 "${WORK}/multi-energy/summary.csv" first)
file(SHA256 "${WORK}/multi-energy-again/summary.csv" second)
if(NOT first STREQUAL second)
  message(FATAL_ERROR "multi --energy-controller summary.csv differs between identical runs")
endif()
expect_run(RESULT 0 ARGS report --in ${WORK}/multi-energy)
file(READ "${WORK}/multi-energy/report.html" energy_html)
# The built-in fleet has no solar, wind, battery or prices: only the carbon bars, and a note
# naming the sites that draw everything from the grid; no empty chart.
if(NOT energy_html MATCHES "id=\"chart-energy-carbon\"" OR NOT energy_html MATCHES "no solar, wind or battery")
  message(FATAL_ERROR "the multi energy report has no carbon bars or no note on grid-only sites")
endif()
foreach(id chart-energy-sources-0 chart-energy-soc chart-energy-cost)
  if(energy_html MATCHES "id=\"${id}\"")
    message(FATAL_ERROR "the multi energy report draws ${id} for a fleet without it")
  endif()
endforeach()
expect_run(RESULT 2 ARGS multi --energy-controller none,nope -q ERR_MATCH "--energy-controller: ")
expect_run(RESULT 2 ARGS multi --slack 0,-1 -q ERR_MATCH "--slack: '-1'")
expect_run(RESULT 2 ARGS multi --load 2000 -q ERR_MATCH "--load: '2000'")
file(WRITE "${WORK}/fleet.json" "{\"sites\": [{\"name\": \"x\", \"pue\": 0.5, \"carbon\": {}}]}")
expect_run(RESULT 1 ARGS multi --fleet ${WORK}/fleet.json -q ERR_MATCH "fleet.json: sites\\[0\\]")

# The energy fleet on the shared data, when present: 4 sites with solar, wind and batteries.
require_shared_file("${DATA}/energy/prices2023/SG_electricity_prices_2023.csv" have_prices)
if(have_prices)
  expect_run(RESULT 0 ARGS multi --fleet ${CMAKE_CURRENT_LIST_DIR}/../examples/fleet-energy.json
             --data-dir ${DATA} --agent local --load 70 --days 1 --warmup-days 0.5 --no-bound
             --energy-controller none,mpc --power-down-idle 1800 --out ${WORK}/fleet-energy
             OUT_MATCH "local +mpc +70")
  # Its sites have solar, wind, batteries and prices: every site energy chart is drawn.
  expect_run(RESULT 0 ARGS report --in ${WORK}/fleet-energy)
  file(READ "${WORK}/fleet-energy/report.html" fleet_energy_html)
  foreach(id chart-energy-sources-0 chart-energy-soc chart-energy-cost chart-energy-carbon)
    if(NOT fleet_energy_html MATCHES "id=\"${id}\"")
      message(FATAL_ERROR "the energy fleet's report has no ${id}")
    endif()
  endforeach()
endif()

# The real trace, when present.
require_shared_file("${DATA}/openb/openb_pod_list_multigpu50.csv" have_openb)
if(have_openb)
  expect_run(RESULT 0 ARGS simulate --nodes ${DATA}/openb/openb_node_list_gpu_node.csv
             --pods ${DATA}/openb/openb_pod_list_multigpu50.csv --policy fgd --seeds 42
             OUT_MATCH "fgd +1 ")
endif()
message(STATUS "cli checks passed")
