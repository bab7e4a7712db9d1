# greensched forecast on a small data folder written here (two zones, 30 days of hourly carbon
# intensity; a pod list of 30 days for the arrivals): runs that work, and bad input that must
# fail with one line naming the problem.
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -P forecast_cli_test.cmake
file(REMOVE_RECURSE "${WORK}")
set(DATA "${WORK}/data")
set(DIR "${DATA}/carbon/emaps2023")
file(MAKE_DIRECTORY "${DIR}")

set(header "Datetime (UTC),Country,Zone Name,Zone Id,Carbon Intensity gCO2eq/kWh (direct),Carbon Intensity gCO2eq/kWh (LCA),Low Carbon Percentage,Renewable Percentage,Data Source,Data Estimated,Data Estimation Method\n")

# row(VAR day hour value): appends an Electricity Maps row for 2023-06-<day> <hour>:00 UTC.
function(row var day hour value)
  if(day LESS 10)
    set(day "0${day}")
  endif()
  if(hour LESS 10)
    set(hour "0${hour}")
  endif()
  set(${var} "${${var}}2023-06-${day} ${hour}:00:00,X,X,X,${value},${value},0,0,test,false,\n" PARENT_SCOPE)
endfunction()

# A zone of 30 days (June 2023): a daily cycle 100..146 plus the day number.
function(zone_text var)
  set(text "${header}")
  foreach(day RANGE 1 30)
    foreach(hour RANGE 0 23)
      math(EXPR v "100 + 2 * ${hour} + ${day}")
      row(text ${day} ${hour} ${v})
    endforeach()
  endforeach()
  set(${var} "${text}" PARENT_SCOPE)
endfunction()
zone_text(good)
file(WRITE "${DIR}/AA_2023_hourly.csv" "${good}")
file(WRITE "${DIR}/BB_2023_hourly.csv" "${good}")

# run(NAME ARGS...): sets NAME_rc, NAME_out, NAME_err.
function(run name)
  execute_process(COMMAND "${GREENSCHED}" forecast ${ARGN} RESULT_VARIABLE rc
                  OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_err "${err}" PARENT_SCOPE)
endfunction()

# expect_error(RC MATCH regex ARGS ...): exit RC and one line "greensched forecast: ...".
function(expect_error)
  cmake_parse_arguments(E "" "RC;MATCH" "ARGS" ${ARGN})
  run(r ${E_ARGS})
  string(REGEX REPLACE "\n$" "" line "${r_err}")
  if(NOT r_rc EQUAL E_RC OR line MATCHES "\n" OR NOT line MATCHES "^greensched forecast: ${E_MATCH}")
    message(FATAL_ERROR "greensched forecast ${E_ARGS}: exit ${r_rc} (expected ${E_RC}), "
                        "stderr:\n${r_err}\nexpected one line matching ${E_MATCH}")
  endif()
endfunction()

set(window --data-dir ${DATA} --start 2023-06-12 --days 3 --horizon 24 --retrain-days 2 --trees 20)

# A run that works: every zone, horizon and model in the JSON, and the CSV written.
run(ok evaluate ${window} --json --out ${WORK}/eval)
if(NOT ok_rc EQUAL 0)
  message(FATAL_ERROR "forecast evaluate: exit ${ok_rc}\n${ok_err}")
endif()
foreach(zone AA BB)
  foreach(model learned seasonal-naive same-hour oracle)
    string(JSON mape ERROR_VARIABLE json_err GET "${ok_out}" ${zone} 24 ${model} mape_pct)
    if(json_err OR mape STREQUAL "null")
      message(FATAL_ERROR "forecast evaluate --json: no ${zone}.24.${model}.mape_pct\n${ok_out}")
    endif()
  endforeach()
endforeach()
file(READ "${WORK}/eval/forecast_eval.csv" csv)
if(NOT csv MATCHES "^zone,horizon_h,model,mape_pct,mae,")
  message(FATAL_ERROR "forecast_eval.csv: unexpected header\n${csv}")
endif()
# Byte-identical again (one thread per model, fixed seed).
run(again evaluate ${window} --json)
if(NOT again_out STREQUAL ok_out)
  message(FATAL_ERROR "forecast evaluate: a second run printed other numbers")
endif()

# Unknown zone, series, information mode: exit 2 naming it.
expect_error(RC 2 MATCH ".*unknown zone 'ZZ' for --series carbon \\(known: AA,BB\\)"
             ARGS evaluate ${window} --zones AA,ZZ)
expect_error(RC 2 MATCH "--series 'gas'" ARGS evaluate ${window} --series gas)
expect_error(RC 2 MATCH "--info 'psychic'" ARGS evaluate ${window} --info psychic)
expect_error(RC 2 MATCH "--info day-ahead: only prices" ARGS evaluate ${window} --info day-ahead)
expect_error(RC 2 MATCH "--horizon 97" ARGS evaluate ${window} --horizon 97)
expect_error(RC 2 MATCH "--issue-hours 24: an hour must be 0-23" ARGS evaluate ${window} --issue-hours 24)
expect_error(RC 2 MATCH "--issue-hours: an hour is given twice" ARGS evaluate ${window} --issue-hours 6,6)
# Every hour of the day: 24 issues a day, and the summary says so.
run(hourly evaluate ${window} --issue-hours all)
if(NOT hourly_rc EQUAL 0 OR NOT hourly_out MATCHES "issued at every hour UTC")
  message(FATAL_ERROR "forecast evaluate --issue-hours all: exit ${hourly_rc}\n${hourly_out}${hourly_err}")
endif()
# Too little history before the window: the zone and the need named.
expect_error(RC 1 MATCH "evaluate: series AA has 24 h before"
             ARGS evaluate --data-dir ${DATA} --start 2023-06-02 --days 2 --zones AA)

# Bad series, each alone in a zone of its own: file:line, nothing interpolated.
function(bad_zone name text)
  file(REMOVE_RECURSE "${WORK}/bad")
  file(MAKE_DIRECTORY "${WORK}/bad/carbon/emaps2023")
  file(WRITE "${WORK}/bad/carbon/emaps2023/${name}_2023_hourly.csv" "${text}")
endfunction()
set(bad_window --data-dir ${WORK}/bad --start 2023-06-12 --days 2 --horizon 24)

# A missing hour (a gap): the reader names the line after it and the gap.
string(REPLACE "2023-06-05 07:00:00,X,X,X,119,119,0,0,test,false,\n" "" gap "${good}")
bad_zone(GAP "${gap}")
expect_error(RC 1 MATCH ".*GAP_2023_hourly.csv:[0-9]+: no data between 2023-06-05 06:00:00 and 2023-06-05 08:00:00"
             ARGS evaluate ${bad_window})
# A repeated hour (a local clock's daylight-saving fall-back written as UTC): refused.
string(REPLACE "2023-06-05 07:00:00,X,X,X,119,119,0,0,test,false,\n"
       "2023-06-05 07:00:00,X,X,X,119,119,0,0,test,false,\n2023-06-05 07:00:00,X,X,X,119,119,0,0,test,false,\n"
       dup "${good}")
bad_zone(DUP "${dup}")
expect_error(RC 1 MATCH ".*DUP_2023_hourly.csv:[0-9]+: time 2023-06-05 07:00:00 is not after"
             ARGS evaluate ${bad_window})
# A negative carbon intensity: refused (a negative price is real and kept; see the unit tests).
string(REPLACE "07:00:00,X,X,X,119,119," "07:00:00,X,X,X,-119,-119," negative "${good}")
bad_zone(NEG "${negative}")
expect_error(RC 1 MATCH ".*NEG_2023_hourly.csv:[0-9]+: carbon intensity -119 is negative"
             ARGS evaluate ${bad_window})
# A flat series: nothing to forecast, and a MAPE of zeros would divide by zero.
set(flat "${header}")
foreach(day RANGE 1 30)
  foreach(hour RANGE 0 23)
    row(flat ${day} ${hour} 50)
  endforeach()
endforeach()
bad_zone(FLAT "${flat}")
expect_error(RC 1 MATCH ".*FLAT_2023_hourly.csv: the series is flat \\(every value is 50\\)"
             ARGS evaluate ${bad_window})
# A data folder without the series.
file(MAKE_DIRECTORY "${WORK}/empty")
expect_error(RC 1 MATCH ".*carbon/emaps2023: no carbon series found" ARGS evaluate --data-dir ${WORK}/empty)

# train: a model file, the same bytes twice.
run(t1 train --data-dir ${DATA} --until 2023-06-20 --trees 20 --out ${WORK}/m1 -q)
run(t2 train --data-dir ${DATA} --until 2023-06-20 --trees 20 --out ${WORK}/m2 -q)
if(NOT t1_rc EQUAL 0 OR NOT t2_rc EQUAL 0)
  message(FATAL_ERROR "forecast train: exit ${t1_rc} / ${t2_rc}\n${t1_err}${t2_err}")
endif()
file(SHA256 "${WORK}/m1/carbon.ubj" h1)
file(SHA256 "${WORK}/m2/carbon.ubj" h2)
if(NOT h1 STREQUAL h2)
  message(FATAL_ERROR "forecast train: two trainings wrote different model files")
endif()

# serve: refused before it listens. A model trained on data after the clock's start (look-ahead),
# an unknown zone, a live clock past the series' end, a public address without TLS: exit 2.
set(serve serve --data-dir ${DATA} --model ${WORK}/m1/carbon.ubj --listen 127.0.0.1:0 -q)
expect_error(RC 2 MATCH "--model .*carbon.ubj: the model was trained on data until 2023-06-20 00:00:00, after the signal clock's start 2023-06-10 00:00:00: .*look-ahead.*--until 2023-06-10"
             ARGS ${serve} --clock-start 2023-06-10)
expect_error(RC 2 MATCH "--zones: unknown zone 'ZZ'" ARGS ${serve} --zones AA,ZZ --clock-start 2023-06-25)
expect_error(RC 2 MATCH "--zones AA: its series ends at 2023-07-01 00:00:00, before the signal time"
             ARGS ${serve} --zones AA)
expect_error(RC 2 MATCH "--clock-speed: must be > 0" ARGS ${serve} --clock-start 2023-06-25 --clock-speed 0)
expect_error(RC 2 MATCH ".*TLS" ARGS serve --data-dir ${DATA} --model ${WORK}/m1/carbon.ubj --listen 0.0.0.0:0)
expect_error(RC 1 MATCH "--model ${WORK}/none.ubj: " ARGS serve --data-dir ${DATA} --model ${WORK}/none.ubj --clock-start 2023-06-25)
# Arrivals: a pod list of 30 days in the openb schema (trace second 0 is 1970-01-01 00:00 UTC),
# one LS pod every hour (1 GPU for 1 to 3 hours, by the day) and a BE pod in the evening hours
# (1 GPU for 2 hours).
set(pods "name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,qos,pod_phase,creation_time,deletion_time,scheduled_time\n")
foreach(day RANGE 0 29)
  foreach(hour RANGE 0 23)
    math(EXPR t "(${day} * 24 + ${hour}) * 3600 + 60")
    math(EXPR end "${t} + 7200")
    math(EXPR ls_end "${t} + 3600 * (1 + ${day} % 3)")
    string(APPEND pods "ls-${day}-${hour},1000,1024,1,1000,,LS,Succeeded,${t},${ls_end},${t}\n")
    if(hour GREATER 17)
      string(APPEND pods "be-${day}-${hour},1000,1024,1,1000,,BE,Succeeded,${t},${end},${t}\n")
    endif()
  endforeach()
endforeach()
file(WRITE "${WORK}/pods.csv" "${pods}")
set(arrivals --series arrivals --pods ${WORK}/pods.csv --start 1970-01-20 --days 3 --horizon 24
    --retrain-days 2 --trees 20)
run(arr evaluate ${arrivals} --json)
if(NOT arr_rc EQUAL 0)
  message(FATAL_ERROR "forecast evaluate --series arrivals: exit ${arr_rc}\n${arr_err}")
endif()
foreach(zone BE LS all)
  string(JSON mae ERROR_VARIABLE json_err GET "${arr_out}" ${zone} 24 oracle mae)
  if(json_err OR NOT mae EQUAL 0)
    message(FATAL_ERROR "forecast evaluate --series arrivals: ${zone}.24.oracle.mae is not 0\n${arr_out}")
  endif()
endforeach()
# The BE class's arrivals repeat every day: seasonal-naive is exact (2 GPU-hours an evening hour).
string(JSON mae GET "${arr_out}" BE 24 seasonal-naive mae)
if(NOT mae EQUAL 0)
  message(FATAL_ERROR "arrivals: BE's seasonal-naive MAE is ${mae}, expected 0\n${arr_out}")
endif()
expect_error(RC 2 MATCH "--info: arrivals are forecast from their own past only"
             ARGS evaluate ${arrivals} --info weather)
expect_error(RC 2 MATCH "--arrival-unit 'pods'" ARGS evaluate ${arrivals} --arrival-unit pods)
expect_error(RC 2 MATCH "--pods and --arrival-unit are for --series arrivals"
             ARGS evaluate ${window} --pods ${WORK}/pods.csv)
expect_error(RC 2 MATCH ".*unknown zone 'GPU' for --series arrivals \\(known: BE,LS,all\\)"
             ARGS evaluate ${arrivals} --zones GPU)
expect_error(RC 1 MATCH ".*none.csv: no such pod list" ARGS evaluate --series arrivals --pods ${WORK}/none.csv)
# A pod list without times (the multigpu schema): the file and the first pod named.
file(WRITE "${WORK}/untimed.csv" "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np-0,1000,1024,1,1000\n")
expect_error(RC 1 MATCH ".*untimed.csv: pod p-0 has no creation or deletion time"
             ARGS evaluate --series arrivals --pods ${WORK}/untimed.csv)
message(STATUS "forecast CLI: all cases passed")
