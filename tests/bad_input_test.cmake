# Malformed input to every command that reads a file: each must fail with one line on stderr,
# "greensched COMMAND: ..." naming the file, and an exit code in 1..127 (never a signal).
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -P bad_input_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")
set(cases 0)

# expect_bad(COMMAND NAMES FILE [FILE...] ARGS ...): fails unless the run ends as described and
# the line names one of FILEs (by file name).
function(expect_bad)
  cmake_parse_arguments(E "" "COMMAND" "NAMES;ARGS" ${ARGN})
  execute_process(COMMAND "${GREENSCHED}" ${E_COMMAND} ${E_ARGS} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(what "greensched ${E_COMMAND} ${E_ARGS}")
  if(NOT rc MATCHES "^[0-9]+$" OR rc EQUAL 0 OR rc GREATER_EQUAL 128)
    message(FATAL_ERROR "${what}: exit '${rc}', expected 1..127\n${err}")
  endif()
  string(REGEX REPLACE "\n$" "" line "${err}")
  if(line MATCHES "\n" OR NOT line MATCHES "^greensched ${E_COMMAND}: ")
    message(FATAL_ERROR "${what}: expected one line 'greensched ${E_COMMAND}: ...', got:\n${err}")
  endif()
  set(named FALSE)
  foreach(f ${E_NAMES})
    get_filename_component(name "${f}" NAME)
    string(FIND "${line}" "${name}" at)
    if(at GREATER_EQUAL 0)
      set(named TRUE)
    endif()
  endforeach()
  if(NOT named)
    message(FATAL_ERROR "${what}: the message names none of ${E_NAMES}:\n${line}")
  endif()
  math(EXPR n "${cases} + 1")
  set(cases ${n} PARENT_SCOPE)
endfunction()

function(write name text)
  file(WRITE "${WORK}/${name}" "${text}")
endfunction()

# Good inputs the bad ones are paired with.
write(nodes.csv "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16000,2,T4\nn1,8000,16000,1,T4\n")
write(pods.csv "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,1,500\n")
write(timed.csv
      "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\na,1000,100,1,1000,,LS,Running,0,100,0\n")
set(W ${WORK})

# --- simulate: node and pod lists, power model, learned model, node events -----------------
write(nodes-dup.csv "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16000,2,T4\nn0,8000,16000,1,T4\n")
expect_bad(COMMAND simulate NAMES nodes-dup.csv ARGS --nodes ${W}/nodes-dup.csv --pods ${W}/pods.csv -q)
write(nodes-cols.csv "sn,cpu_milli\nn0,8000\n")
expect_bad(COMMAND simulate NAMES nodes-cols.csv ARGS --nodes ${W}/nodes-cols.csv --pods ${W}/pods.csv -q)
write(nodes-int.csv "sn,cpu_milli,memory_mib,gpu,model\nn0,lots,16000,2,T4\n")
expect_bad(COMMAND simulate NAMES nodes-int.csv ARGS --nodes ${W}/nodes-int.csv --pods ${W}/pods.csv -q)
write(nodes-empty.csv "")
expect_bad(COMMAND simulate NAMES nodes-empty.csv ARGS --nodes ${W}/nodes-empty.csv --pods ${W}/pods.csv -q)
write(pods-dup.csv "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,1,500\np0,1000,100,1,500\n")
expect_bad(COMMAND simulate NAMES pods-dup.csv ARGS --nodes ${W}/nodes.csv --pods ${W}/pods-dup.csv -q)
write(pods-neg.csv "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,-5,1,500\n")
expect_bad(COMMAND simulate NAMES pods-neg.csv ARGS --nodes ${W}/nodes.csv --pods ${W}/pods-neg.csv -q)
write(pods-fields.csv "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100\n")
expect_bad(COMMAND simulate NAMES pods-fields.csv ARGS --nodes ${W}/nodes.csv --pods ${W}/pods-fields.csv -q)
write(power-bad.json "{\"gpus\": ")
expect_bad(COMMAND simulate NAMES power-bad.json ARGS --power-model ${W}/power-bad.json -q)
write(power-type.json "{\"gpus\": 5, \"cpus\": {}}")
expect_bad(COMMAND simulate NAMES power-type.json ARGS --power-model ${W}/power-type.json -q)
write(power-watts.json "{\"gpus\": {\"T4\": {\"idle_watts\": \"ten\", \"max_watts\": 70}}, \"cpus\": {}}")
expect_bad(COMMAND simulate NAMES power-watts.json ARGS --power-model ${W}/power-watts.json -q)
write(model-bad.json "not json")
expect_bad(COMMAND simulate NAMES model-bad.json ARGS --policy learned=${W}/model-bad.json --seeds 1 -q)
write(model-type.json "{\"format\": 3, \"weights\": []}")
expect_bad(COMMAND simulate NAMES model-type.json ARGS --policy learned=${W}/model-type.json --seeds 1 -q)
write(model-weights.json "{\"format\": \"greensched-linear-v1\", \"weights\": {\"x\": \"y\"}}")
expect_bad(COMMAND simulate NAMES model-weights.json ARGS --policy learned=${W}/model-weights.json --seeds 1 -q)
write(events-bad.csv "time,node,event\nsoon,n0,down\n")
expect_bad(COMMAND simulate NAMES events-bad.csv ARGS --mode replay --nodes ${W}/nodes.csv
           --pods ${W}/timed.csv --node-events ${W}/events-bad.csv -q)
write(events-node.csv "time,node,event\n5,nosuch,down\n")
expect_bad(COMMAND simulate NAMES events-node.csv ARGS --mode replay --nodes ${W}/nodes.csv
           --pods ${W}/timed.csv --node-events ${W}/events-node.csv -q)
write(events-kind.csv "time,node,event\n5,n0,reboot\n")
expect_bad(COMMAND simulate NAMES events-kind.csv ARGS --mode replay --nodes ${W}/nodes.csv
           --pods ${W}/timed.csv --node-events ${W}/events-kind.csv -q)

write(power-cores.json "{\"gpus\": {}, \"cpus\": {\"a\": {\"idle_watts\": 1, \"max_watts\": 2, \"cores_per_socket\": 1e118}}, \"default_cpu\": \"a\"}")
expect_bad(COMMAND simulate NAMES power-cores.json ARGS --power-model ${W}/power-cores.json -q)

# --- multi: fleet JSON and the carbon / price series it names --------------------------------
write(fleet-scale.json "{\"sites\": [{\"name\": \"a\", \"scale\": 1e300, \"carbon\": {\"path\": \"c.csv\"}}]}")
expect_bad(COMMAND multi NAMES fleet-scale.json ARGS --fleet ${W}/fleet-scale.json -q)
write(fleet-bad.json "{\"sites\": [")
expect_bad(COMMAND multi NAMES fleet-bad.json ARGS --fleet ${W}/fleet-bad.json -q)
write(fleet-sites.json "{\"sites\": {}}")
expect_bad(COMMAND multi NAMES fleet-sites.json ARGS --fleet ${W}/fleet-sites.json -q)
write(fleet-pue.json "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"c.csv\"}, \"pue\": \"1.2\"}]}")
expect_bad(COMMAND multi NAMES fleet-pue.json ARGS --fleet ${W}/fleet-pue.json -q)
write(fleet-format.json "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"c.csv\", \"format\": 5}}]}")
expect_bad(COMMAND multi NAMES fleet-format.json ARGS --fleet ${W}/fleet-format.json -q)
write(fleet-nodes.json "{\"sites\": [{\"name\": \"a\", \"nodes\": 7, \"carbon\": {\"path\": \"c.csv\"}}]}")
expect_bad(COMMAND multi NAMES fleet-nodes.json ARGS --fleet ${W}/fleet-nodes.json -q)
write(carbon-bad.csv "time,carbon\n0,abc\n")
write(fleet-carbon.json "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"carbon-bad.csv\"}}]}")
expect_bad(COMMAND multi NAMES carbon-bad.csv ARGS --fleet ${W}/fleet-carbon.json --data-dir ${W} -q)
write(fleet-missing.json "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"nosuch.csv\"}}]}")
expect_bad(COMMAND multi NAMES nosuch.csv ARGS --fleet ${W}/fleet-missing.json --data-dir ${W} -q)
write(carbon-ok.csv "100\n200\n")
write(price-bad.csv "\"quoted\n")
write(fleet-price.json "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"carbon-ok.csv\"}, \"price\": {\"path\": \"price-bad.csv\", \"format\": \"emaps\"}}]}")
expect_bad(COMMAND multi NAMES price-bad.csv fleet-price.json ARGS --fleet ${W}/fleet-price.json --data-dir ${W} -q)
expect_bad(COMMAND multi NAMES pods-dup.csv ARGS --pods ${W}/pods-dup.csv -q)

# --- explain: decision records ---------------------------------------------------------------
write(rec-json.jsonl "{\"pod\": \n")
expect_bad(COMMAND explain NAMES rec-json.jsonl ARGS --record ${W}/rec-json.jsonl --pod x)
write(rec-request.jsonl "{\"pod\":\"x\",\"step\":1,\"chosen_node\":5,\"request\":\"bad\"}\n")
expect_bad(COMMAND explain NAMES rec-request.jsonl ARGS --record ${W}/rec-request.jsonl --pod x)
write(rec-nopod.jsonl "{\"request\":{}}\n")
expect_bad(COMMAND explain NAMES rec-nopod.jsonl ARGS --record ${W}/rec-nopod.jsonl --pod x)
write(rec-gpus.jsonl "{\"pod\":\"x\",\"request\":{},\"chosen_node\":\"n\",\"policy\":\"fgd\",\"chosen_gpus\":[\"a\"]}\n")
expect_bad(COMMAND explain NAMES rec-gpus.jsonl ARGS --record ${W}/rec-gpus.jsonl --pod x)
write(rec-dispatch.jsonl "{\"pod\":\"x\",\"kind\":\"dispatch\",\"request\":{}}\n")
expect_bad(COMMAND explain NAMES rec-dispatch.jsonl ARGS --record ${W}/rec-dispatch.jsonl --pod x)
write(rec-seed.jsonl "{\"pod\":\"x\",\"request\":{},\"run\":{\"seed\":\"one\"}}\n")
expect_bad(COMMAND explain NAMES rec-seed.jsonl ARGS --record ${W}/rec-seed.jsonl --pod x --seeds 1)

# --- report: result CSVs and decision records ------------------------------------------------
file(MAKE_DIRECTORY ${W}/results)
write(results/summary.csv "policy,seed\nfgd,notanumber,3\n")
expect_bad(COMMAND report NAMES summary.csv ARGS --in ${W}/results --out ${W}/r)
file(MAKE_DIRECTORY ${W}/empty-results)
expect_bad(COMMAND report NAMES empty-results ARGS --in ${W}/empty-results --out ${W}/r)

# --- calibrate: monitor samples and the base power model ------------------------------------
write(samples-bad.jsonl "{\"time\": \n")
expect_bad(COMMAND calibrate NAMES samples-bad.jsonl ARGS --samples ${W}/samples-bad.jsonl --out ${W}/cal)
write(samples-type.jsonl "{\"time\": \"noon\", \"gpus\": 3}\n")
expect_bad(COMMAND calibrate NAMES samples-type.jsonl ARGS --samples ${W}/samples-type.jsonl --out ${W}/cal)
write(samples-ok.jsonl "")
expect_bad(COMMAND calibrate NAMES power-bad.json ARGS --samples ${W}/samples-ok.jsonl
           --base ${W}/power-bad.json --out ${W}/cal)

# --- serve: config and node list -------------------------------------------------------------
write(serve-bad.json "{policy: fgd}")
expect_bad(COMMAND serve NAMES serve-bad.json ARGS --config ${W}/serve-bad.json --listen 127.0.0.1:0 --nodes ${W}/nodes.csv --state ${W}/state -q)
write(serve-type.json "{\"threads\": \"four\"}")
expect_bad(COMMAND serve NAMES serve-type.json ARGS --config ${W}/serve-type.json --listen 127.0.0.1:0 --nodes ${W}/nodes.csv --state ${W}/state -q)
expect_bad(COMMAND serve NAMES nodes-dup.csv ARGS --listen 127.0.0.1:0 --nodes ${W}/nodes-dup.csv --state ${W}/state -q)

# --- train, profile, bound: the same readers -------------------------------------------------
expect_bad(COMMAND train NAMES pods-dup.csv ARGS --nodes ${W}/nodes.csv --pods ${W}/pods-dup.csv --out ${W}/m -q)
write(ckpt-bad.json "[1, 2")
expect_bad(COMMAND train NAMES ckpt-bad.json ARGS --nodes ${W}/nodes.csv --pods ${W}/pods.csv
           --checkpoint ${W}/ckpt-bad.json --resume --out ${W}/m -q)
expect_bad(COMMAND profile NAMES pods-neg.csv ARGS --pods ${W}/pods-neg.csv)
expect_bad(COMMAND bound NAMES nodes-dup.csv ARGS --nodes ${W}/nodes-dup.csv --pods ${W}/pods.csv)

message("${cases} malformed inputs rejected with one line and an exit code below 128")
