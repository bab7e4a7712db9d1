# Today's GPUs on the command line, run by ctest:
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -P gpu_models_cli_test.cmake
# A node list of H100 (in two spellings), H200, B200, L40S and MI300X nodes simulates in
# inflation and replay mode on the built-in power model; a node of a model with no figures is
# refused naming its line; a power model that gives figures for it lets it run.
cmake_policy(SET CMP0007 NEW)  # list indices count empty CSV fields
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

include(${CMAKE_CURRENT_LIST_DIR}/expect_run.cmake)

# One node of each model, 64 vCPU (2 sockets of the default CPU, 15 W idle each).
file(WRITE "${WORK}/nodes.csv"
     "sn,cpu_milli,memory_mib,gpu,model\n"
     "h100-a,64000,1048576,8,NVIDIA-H100-80GB-HBM3\n"
     "h100-b,64000,1048576,8,H100-SXM\n"
     "h200,64000,1048576,8,H200\n"
     "b200,64000,1048576,8,NVIDIA-B200\n"
     "l40s,64000,1048576,4,NVIDIA-L40S\n"
     "mi300x,64000,1048576,8,AMD Instinct MI300X\n")
# Timed pods; `gpu_spec` names models in other spellings.
file(WRITE "${WORK}/pods.csv"
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
     "a,8000,1024,8,1000,h100,LS,Running,0,3600,0\n"
     "b,8000,1024,4,1000,NVIDIA-L40S,LS,Running,0,3600,0\n"
     "c,4000,1024,1,500,,BE,Running,60,1800,60\n"
     "d,8000,1024,8,1000,B200|MI300X,LS,Running,120,3600,120\n"
     "e,2000,1024,1,1000,H200,BE,Running,300,900,300\n")

# Inflation: small GPU shares, so that arrivals pass 90, 100 and 130 % of the GPUs in small
# steps; the power-by-model table has a column for each model.
file(WRITE "${WORK}/shares.csv"
     "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n"
     "s1,500,256,1,100,,LS,Running,0,10,0\ns2,500,256,1,200,H100,LS,Running,0,10,0\n"
     "s3,500,256,1,300,,BE,Running,0,10,0\ns4,500,256,1,200,MI300X|B200,BE,Running,0,10,0\n")
expect_run(RESULT 0 ARGS simulate --nodes ${WORK}/nodes.csv --pods ${WORK}/shares.csv
           --policy fgd,pwr --seeds 1 --report-power-by-model --out ${WORK}/inflation
           OUT_MATCH "policy +H100 +H200 +B200 +L40S +MI300X|policy +.*MI300X")
file(STRINGS "${WORK}/inflation/summary.csv" inflation_summary)
list(GET inflation_summary 1 fgd_row)
string(REPLACE "," ";" fgd_row "${fgd_row}")
list(GET fgd_row 10 fgd_watts)  # power_watts_at_100
# Between the idle cluster and every GPU at max: idle GPUs 2 x 8 x 71 + 8 x 80 + 8 x 100 +
# 4 x 35 + 8 x 75 = 3316 W, CPUs 6 x 2 x 15 W = 180 W; all at max 2 x 5600 + 5600 + 8000 +
# 1400 + 6000 + 6 x 2 x 120 = 33640 W.
if(NOT fgd_watts GREATER 3496 OR NOT fgd_watts LESS 33640)
  message(FATAL_ERROR "fgd power at 100 %: ${fgd_watts} W\n${inflation_summary}")
endif()

expect_run(RESULT 0 ARGS simulate --mode replay --nodes ${WORK}/nodes.csv --pods ${WORK}/pods.csv
           --policy fgd,pwr --out ${WORK}/replay -q)
file(STRINGS "${WORK}/replay/timeline.csv" timeline)
# fgd's first two points, both at t = 0: the idle cluster, then pods a and b started.
#   Idle: GPUs 2 x 8 x 71 + 8 x 80 + 8 x 100 + 4 x 35 + 8 x 75 = 3316 W, CPUs 6 nodes x
#   2 sockets x 15 W = 180 W: 3496 W.
#   a (8 H100s, 8 vCPU: one socket busy) and b (4 L40S, 8 vCPU): h100-a 8 x 700 + 120 + 15 =
#   5735, l40s 4 x 350 + 120 + 15 = 1535, the idle h100-b 598, h200 670, b200 830 and
#   mi300x 630: 9998 W.
foreach(point 1 2)
  list(GET timeline ${point} row)
  string(REPLACE "," ";" row "${row}")
  list(GET row 9 watts)
  list(APPEND watts_at_0 ${watts})
endforeach()
if(NOT watts_at_0 STREQUAL "3496.000;9998.000")
  message(FATAL_ERROR "replay power at t = 0: ${watts_at_0} W, expected 3496 and 9998 W\n"
                      "${timeline}")
endif()
file(STRINGS "${WORK}/replay/summary.csv" replay_summary)
list(GET replay_summary 1 fgd_row)
if(NOT fgd_row MATCHES "^fgd,42,backfill,5,5,0,")  # every pod started; backfill by default
  message(FATAL_ERROR "replay summary.csv: ${replay_summary}")
endif()

# A model with no power figures: refused in both modes, naming its line and the fix.
file(READ "${WORK}/nodes.csv" nodes)
file(WRITE "${WORK}/nodes-h800.csv" "${nodes}h800,64000,1048576,8,H800\n")
foreach(mode inflation replay)
  expect_run(RESULT 1 ARGS simulate --mode ${mode} --nodes ${WORK}/nodes-h800.csv
             --pods ${WORK}/pods.csv --policy fgd -q
             ERR_MATCH "nodes-h800.csv:8: unknown GPU model \"H800\" \\(no figures in the built-in power model\\); known: A10, .*H100.*; add it with --power-model FILE")
endforeach()
file(WRITE "${WORK}/power.json"
     "{\"gpus\": {\"H800\": {\"same_as\": \"H100\"}, \"H100\": {\"idle_watts\": 71, \"max_watts\": 700},"
     " \"H200\": {\"idle_watts\": 80, \"max_watts\": 700}, \"B200\": {\"idle_watts\": 100, \"max_watts\": 1000},"
     " \"L40S\": {\"idle_watts\": 35, \"max_watts\": 350}, \"MI300X\": {\"idle_watts\": 75, \"max_watts\": 750}},"
     " \"cpus\": {\"c\": {\"idle_watts\": 15, \"max_watts\": 120, \"cores_per_socket\": 16}},"
     " \"default_cpu\": \"c\"}")
expect_run(RESULT 0 ARGS simulate --mode replay --nodes ${WORK}/nodes-h800.csv
           --pods ${WORK}/pods.csv --policy fgd --power-model ${WORK}/power.json -q)
