# The conventions every greensched command shares (docs/CLI.md, "Conventions"): --seeds
# lists, one --power-down-idle parser, --out folders, the --tune default, where data paths
# start, the exit codes and one-line errors, the short top-level --help, the deprecated
# spellings, the completion scripts, and one vocabulary: FILE and DIR metavars, durations with
# units, --record for every decision file, loopback listeners, an example in every --help, -q
# without a table, and multi's default run.
#   cmake -DGREENSCHED=<binary> -DWORK=<scratch dir> -P cli_conventions_test.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

# run(NAME ARGS... [ENV VAR=VALUE] [DIR dir]): sets NAME_rc, NAME_out, NAME_err.
function(run name)
  cmake_parse_arguments(R "" "DIR" "ENV;ARGS" ${ARGN})
  if(NOT R_DIR)
    set(R_DIR "${WORK}")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${R_ENV} "${GREENSCHED}" ${R_ARGS}
                  WORKING_DIRECTORY "${R_DIR}" RESULT_VARIABLE rc OUTPUT_VARIABLE out
                  ERROR_VARIABLE err TIMEOUT 300)
  set(${name}_rc "${rc}" PARENT_SCOPE)
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_err "${err}" PARENT_SCOPE)
endfunction()

# check(CONDITION... MESSAGE text...): fails with the text unless the if() condition holds.
function(check)
  cmake_parse_arguments(C "" "" "MESSAGE" ${ARGN})
  if(NOT (${C_UNPARSED_ARGUMENTS}))
    message(FATAL_ERROR ${C_MESSAGE})
  endif()
endfunction()

# expect_error(RC ARGS... MATCH regex): exit RC and exactly one line "greensched CMD: ...".
function(expect_error)
  cmake_parse_arguments(E "" "RC;MATCH" "ARGS" ${ARGN})
  run(r ARGS ${E_ARGS})
  string(REGEX REPLACE "\n$" "" line "${r_err}")
  if(NOT r_rc EQUAL E_RC OR line MATCHES "\n" OR NOT line MATCHES "${E_MATCH}")
    message(FATAL_ERROR "greensched ${E_ARGS}: exit ${r_rc} (expected ${E_RC}), stderr:\n"
                        "${r_err}\nexpected one line matching ${E_MATCH}")
  endif()
endfunction()

# --- top-level help: one line per command, the exit codes at the end --------------------------
run(help ARGS --help)
string(REGEX MATCHALL "\n" newlines "${help_out}")
list(LENGTH newlines help_lines)
check(help_rc EQUAL 0 AND help_lines LESS 45 MESSAGE "greensched --help: exit ${help_rc}, ${help_lines} lines:\n${help_out}")
foreach(cmd simulate multi explain report monitor profile calibrate serve deschedule bound train dispatch convert forecast)
  check(help_out MATCHES "\n  ${cmd} +[A-Z][^\n]+\n" MESSAGE "greensched --help lacks a line for ${cmd}:\n${help_out}")
endforeach()
check(help_out MATCHES "Exit codes: 0 done. 1 bad input" MESSAGE "greensched --help lacks the exit codes")
check(NOT help_out MATCHES "Inflation mode|completion|cli-docs" MESSAGE "greensched --help shows a long text or a hidden command")
run(sim_help ARGS simulate --help)
check(sim_help_rc EQUAL 0 AND sim_help_out MATCHES "Inflation mode" AND sim_help_out MATCHES "--seeds" MESSAGE "simulate --help lost its long text:\n${sim_help_out}")

# --- exit codes and one-line errors, CLI11's own included -------------------------------------
expect_error(RC 2 ARGS simulate --nosuch MATCH "^greensched simulate: .*--nosuch.*see greensched simulate --help")
expect_error(RC 2 ARGS MATCH "^greensched: .*subcommand")
expect_error(RC 2 ARGS simulate --tune x MATCH "^greensched simulate: .*--tune")
expect_error(RC 1 ARGS simulate --nodes ${WORK}/absent-nodes.csv --pods ${WORK}/absent-pods.csv
             MATCH "^greensched simulate: .*absent-nodes.csv")
expect_error(RC 1 ARGS report --in ${WORK}/absent-dir MATCH "^greensched report: .*absent-dir")
# Writing fails: 74, the path named.
expect_error(RC 74 ARGS simulate --policy fgd --seeds 1 --tune 1.0 -q --out /dev/null/sub
             MATCH "^greensched simulate: /dev/null/sub: cannot create directory")

# --- --seeds: lists where a command runs several, one seed where only one is meaningful -------
file(WRITE "${WORK}/nodes.csv" "sn,cpu_milli,memory_mib,gpu,model\nn0,8000,16000,2,T4\n")
file(WRITE "${WORK}/pods.csv" "name,cpu_milli,memory_mib,num_gpu,gpu_milli\np0,1000,100,1,500\n")
expect_error(RC 2 ARGS dispatch --config ${WORK}/absent.json --seeds 1,2 MATCH "^greensched dispatch: --seeds: this command runs with one seed, got 2")
expect_error(RC 2 ARGS train --nodes ${WORK}/nodes.csv --pods ${WORK}/pods.csv --out ${WORK}/m --seeds 1-3
             MATCH "^greensched train: --seeds: this command runs with one seed, got 3")
expect_error(RC 2 ARGS multi --seeds 5-1 -q MATCH "^greensched multi: --seeds: '5-1' is not a range")

# multi runs every seed: --json rows carry their seed, each seed's CSVs in OUT/seed-N, and the
# second seed's files are those of a run of that seed alone.
set(multi_args multi --agent local,green --load off --no-bound --days 2 --power-down-idle 1800 -q)
run(two ARGS ${multi_args} --seeds 3-4 --json)
check(two_rc EQUAL 0 MESSAGE "multi --seeds 3-4: exit ${two_rc}\n${two_err}")
string(REGEX MATCHALL "\"seed\": 3" seed3 "${two_out}")
string(REGEX MATCHALL "\"seed\": 4" seed4 "${two_out}")
list(LENGTH seed3 n3)
list(LENGTH seed4 n4)
check(n3 EQUAL 2 AND n4 EQUAL 2 MESSAGE "multi --seeds 3-4 --json: ${n3} rows of seed 3, ${n4} of seed 4:\n${two_out}")
run(two_out ARGS ${multi_args} --seeds 3,4 --out ${WORK}/multi-seeds --record ${WORK}/multi-seeds.jsonl)
check(two_out_rc EQUAL 0 AND EXISTS "${WORK}/multi-seeds/seed-3/summary.csv" MESSAGE "multi --seeds 3,4 --out: no seed-3/summary.csv\n${two_out_err}")
run(one ARGS ${multi_args} --seeds 4 --out ${WORK}/multi-seed-4)
file(SHA256 "${WORK}/multi-seeds/seed-4/summary.csv" a)
file(SHA256 "${WORK}/multi-seed-4/summary.csv" b)
check(a STREQUAL b MESSAGE "multi --seeds 3,4: seed 4's summary.csv differs from a run of seed 4 alone")
file(STRINGS "${WORK}/multi-seeds.jsonl" records LIMIT_COUNT 1)
check(records MATCHES "^{\"run\":{\"agent\":\"local\",\"seed\":3}" MESSAGE "multi --record lines lack their run: ${records}")
run(explain_seed ARGS explain --record ${WORK}/multi-seeds.jsonl --policy green --seeds 4 --step 0 --json)
check(explain_seed_rc EQUAL 0 MESSAGE "explain --policy green --seeds 4 on multi records: exit ${explain_seed_rc}\n${explain_seed_err}")

# The deprecated spelling still works, with a note on stderr.
run(old_seed ARGS multi --agent local --load off --no-bound --days 1 --seed 7 -q --json)
check(old_seed_rc EQUAL 0 AND old_seed_out MATCHES "\"seed\": 7" AND old_seed_err MATCHES "greensched multi: --seed is deprecated. pass --seeds" MESSAGE
      "multi --seed 7: exit ${old_seed_rc}\n${old_seed_out}\n${old_seed_err}")

# --- --power-down-idle: one parser; multi runs one setting --------------------------------------
expect_error(RC 2 ARGS multi --power-down-idle soon -q MATCH "^greensched multi: --power-down-idle: 'soon' is not 'off' or a duration")
expect_error(RC 2 ARGS simulate --mode replay --load 50 --power-down-idle soon -q MATCH "^greensched simulate: --power-down-idle: 'soon' is not 'off' or a duration")
expect_error(RC 2 ARGS multi --power-down-idle off,1800 -q MATCH "^greensched multi: --power-down-idle: multi runs one setting")
run(off ARGS multi --agent local --load off --no-bound --days 1 --power-down-idle off -q --json)
run(never ARGS multi --agent local --load off --no-bound --days 1 -q --json)
# The same figures (wall time aside).
string(REGEX REPLACE "\"wall_seconds\": [-+.e0-9]+" "" off_out "${off_out}")
string(REGEX REPLACE "\"wall_seconds\": [-+.e0-9]+" "" never_out "${never_out}")
check(off_rc EQUAL 0 AND off_out STREQUAL never_out MESSAGE "multi --power-down-idle off differs from the default (off)")

# --- --mpc-forecast: a name multi knows; --mpc-forecast-models only with learned -------------
expect_error(RC 2 ARGS multi --mpc-forecast oracle -q MATCH "^greensched multi: --mpc-forecast: unknown forecast 'oracle' \\(seasonal-naive\\|learned\\)")
expect_error(RC 2 ARGS multi --mpc-forecast-models ${WORK} -q MATCH "^greensched multi: --mpc-forecast-models needs --mpc-forecast learned")

# --- --forecast: a name multi knows; learned forecasts are not the oracle's ---------------------
expect_error(RC 2 ARGS multi --forecast oracle -q MATCH "^greensched multi: --forecast: unknown forecast 'oracle' \\(same-hour\\|learned\\)")
expect_error(RC 2 ARGS multi --forecast learned --oracle -q MATCH "^greensched multi: --forecast learned and --oracle: --oracle adds runs whose forecasts are the actual series. choose one")
expect_error(RC 2 ARGS multi --forecast same-hour --mpc-forecast-models ${WORK} -q MATCH "^greensched multi: --mpc-forecast-models needs --mpc-forecast learned or --forecast learned")

# --- --tune: one default, 1.3 ---------------------------------------------------------------------
run(tune ARGS simulate --policy fgd --seeds 1 -q --json)
check(tune_rc EQUAL 0 AND tune_out MATCHES "\"tune\": 1\\.3" MESSAGE "simulate's default tune is not 1.3:\n${tune_out}")
expect_error(RC 2 ARGS bound --policy fgd --seeds 1 --tune 1.0 --arrival 100 -q MATCH "^greensched bound: --tune 1 \\(the policies' runs\\) does not reach the bound's 100 % arrival bin")
run(run_tune ARGS bound --policy none --seeds 1 --run-tune 1.3 -q)
check(run_tune_rc EQUAL 0 AND run_tune_err MATCHES "--run-tune is deprecated. pass --tune" MESSAGE "bound --run-tune: exit ${run_tune_rc}\n${run_tune_err}")

# --- --out is a folder; the old file spelling still works with a note -------------------------
run(sim ARGS simulate --policy fgd --seeds 1 --tune 1.0 -q --out ${WORK}/results)
run(rep_default ARGS report --in ${WORK}/results)
check(rep_default_rc EQUAL 0 AND EXISTS "${WORK}/results/report.html" MESSAGE "report without --out did not write results/report.html\n${rep_default_err}")
run(rep_dir ARGS report --in ${WORK}/results --out ${WORK}/pages/sim)
check(rep_dir_rc EQUAL 0 AND EXISTS "${WORK}/pages/sim/report.html" AND rep_dir_err MATCHES "^$" MESSAGE
      "report --out DIR did not write DIR/report.html\n${rep_dir_err}")
run(rep_file ARGS report --in ${WORK}/results --out ${WORK}/old/page.html)
check(rep_file_rc EQUAL 0 AND EXISTS "${WORK}/old/page.html" AND rep_file_err MATCHES "^greensched report: --out FILE is deprecated. pass a folder" MESSAGE
      "report --out FILE.html: exit ${rep_file_rc}\n${rep_file_err}")

set(train_args train --nodes ${WORK}/nodes.csv --pods ${WORK}/pods.csv --generations 1
    --population 2 --elite 1 --pairs 1 -q)
run(train_dir ARGS ${train_args} --out ${WORK}/trained)
check(train_dir_rc EQUAL 0 AND EXISTS "${WORK}/trained/model.json" AND EXISTS "${WORK}/trained/checkpoint.json" MESSAGE
      "train --out DIR: exit ${train_dir_rc}\n${train_dir_err}")
run(train_file ARGS ${train_args} --out ${WORK}/old-model.json)
check(train_file_rc EQUAL 0 AND EXISTS "${WORK}/old-model.json" AND train_file_err MATCHES "^greensched train: --out FILE is deprecated" MESSAGE
      "train --out FILE.json: exit ${train_file_rc}\n${train_file_err}")

# --- data paths: $GREENSCHED_DATA, never the working directory ----------------------------------
file(MAKE_DIRECTORY "${WORK}/data")
file(WRITE "${WORK}/data/carbon-test.csv" "time,value\n0,100\n3600,200\n")
file(WRITE "${WORK}/fleet.json" "{\"sites\": [{\"name\": \"a\", \"carbon\": {\"path\": \"carbon-test.csv\"}}]}")
run(env_data ARGS multi --fleet ${WORK}/fleet.json --agent local --load off --no-bound --days 1 -q ENV GREENSCHED_DATA=${WORK}/data)
check(env_data_rc EQUAL 0 MESSAGE "multi with GREENSCHED_DATA: exit ${env_data_rc}\n${env_data_err}")
# From the folder holding the file but without the variable: the working directory is not used.
run(cwd_data ARGS multi --fleet ${WORK}/fleet.json --agent local --load off --no-bound --days 1 -q DIR ${WORK}/data
    ENV GREENSCHED_DATA=)
check(cwd_data_rc EQUAL 1 AND cwd_data_err MATCHES "carbon-test.csv" MESSAGE "multi read data from the working directory: exit ${cwd_data_rc}\n${cwd_data_err}")
run(dir_data ARGS multi --fleet ${WORK}/fleet.json --data-dir ${WORK}/data --agent local --load off --no-bound
    --days 1 -q)
check(dir_data_rc EQUAL 0 MESSAGE "multi --data-dir: exit ${dir_data_rc}\n${dir_data_err}")

# --- one vocabulary, in every command's --help -----------------------------------------------------
foreach(cmd simulate multi explain report compare merge monitor profile calibrate serve deschedule
        bound train dispatch convert "convert kubectl" "convert sacct" forecast "forecast evaluate"
        "forecast train")
  separate_arguments(words UNIX_COMMAND "${cmd}")
  run(h ARGS ${words} --help)
  check(h_rc EQUAL 0 MESSAGE "greensched ${cmd} --help: exit ${h_rc}")
  check(h_out MATCHES "\nExamples?:" MESSAGE "greensched ${cmd} --help has no example:\n${h_out}")
  # Metavars say what a value is: FILE, DIR, DURATION, the choices; never a validator's words.
  check(NOT h_out MATCHES "TEXT:|INT:|FLOAT:|UINT:|DIR:DIR|ENUM:|value in {" MESSAGE
        "greensched ${cmd} --help shows a validator's words as a metavar:\n${h_out}")
  foreach(file_option nodes pods fleet config record power-model port-file tls-cert tls-key
          client-ca auth-token-file nodes-json narrator-log node-events samples)
    if(h_out MATCHES "\n  --${file_option} ")
      check(h_out MATCHES "\n  --${file_option} FILE" MESSAGE "greensched ${cmd}: --${file_option} is not shown as FILE:\n${h_out}")
    endif()
  endforeach()
  foreach(dir_option out in state data-dir)
    if(h_out MATCHES "\n  --${dir_option} ")
      check(h_out MATCHES "\n  --${dir_option} DIR" MESSAGE "greensched ${cmd}: --${dir_option} is not shown as DIR:\n${h_out}")
    endif()
  endforeach()
  # A time is a DURATION (12h, 30m): no option takes a bare count of seconds or hours.
  check(NOT h_out MATCHES "\n  --[a-z-]+ (INT|FLOAT|UINT|TEXT)(=[^ \n]*)? +(seconds|hours|minutes) "
        AND NOT h_out MATCHES "\n  --[a-z-]+ (INT|FLOAT|UINT)[^\n]* in (seconds|hours|minutes)" MESSAGE
        "greensched ${cmd}: a time option without units:\n${h_out}")
  # Listeners are loopback unless told otherwise.
  if(h_out MATCHES "\n  --listen [A-Z]+=")
    check(h_out MATCHES "\n  --listen [A-Z]+=127\\.0\\.0\\.1:" MESSAGE "greensched ${cmd}: --listen is not loopback by default:\n${h_out}")
  endif()
endforeach()
# Every command that takes a policy or an agent lists every one it accepts: the policies of
# simulate's help (the catalogue and the registry) in bound's and serve's, the agents of multi's
# in dispatch's.
run(sim_h ARGS simulate --help)
string(REGEX MATCH "comma list of ([^;]+);" policy_list "${sim_h_out}")
string(REGEX REPLACE "[\n ]+" " " policy_list "${CMAKE_MATCH_1}")
string(REPLACE ", " ";" policies "${policy_list}")
foreach(known random bestfit fgd pwr fgd-energy fgd-online learned=MODEL.json)
  list(FIND policies "${known}" at)
  check(NOT at EQUAL -1 MESSAGE "simulate --policy's help lacks ${known}: ${policy_list}")
endforeach()
foreach(cmd bound serve)
  run(h ARGS ${cmd} --help)
  string(REGEX REPLACE "[\n ]+" " " flat "${h_out}")
  foreach(p IN LISTS policies)
    string(FIND "${flat}" "${p}" at)
    check(NOT at EQUAL -1 MESSAGE "greensched ${cmd} --help does not list the policy ${p}")
  endforeach()
endforeach()
run(multi_h ARGS multi --help)
string(REGEX MATCH "comma list of agents \\(([^)]+)\\)" agent_list "${multi_h_out}")
string(REGEX REPLACE "[\n ]+" " " agent_list "${CMAKE_MATCH_1}")
string(REPLACE ", " ";" agents "${agent_list}")
foreach(known local green green-plan green-cost-carbon)
  list(FIND agents "${known}" at)
  check(NOT at EQUAL -1 MESSAGE "multi --agent's help lacks ${known}: ${agent_list}")
endforeach()
run(dispatch_h ARGS dispatch --help)
string(REGEX REPLACE "[\n ]+" " " flat "${dispatch_h_out}")
foreach(a IN LISTS agents)
  string(FIND "${flat}" "${a}" at)
  check(NOT at EQUAL -1 MESSAGE "greensched dispatch --help does not list the agent ${a}")
endforeach()
# Every command that writes decisions names the file --record.
foreach(cmd simulate multi serve dispatch)
  run(h ARGS ${cmd} --help)
  check(h_out MATCHES "\n  --record FILE" MESSAGE "greensched ${cmd} has no --record FILE:\n${h_out}")
endforeach()
run(journal ARGS dispatch --config ${WORK}/absent.json --journal ${WORK}/d.jsonl)
check(journal_err MATCHES "greensched dispatch: --journal is deprecated. pass --record" MESSAGE
      "dispatch --journal: no deprecation note:\n${journal_err}")
# Durations with units mean what the bare numbers (hours for --slack, seconds elsewhere) meant.
set(plain_multi multi --agent local,green --days 1 --load off --no-bound -q --json)
run(units ARGS ${plain_multi} --slack 30m --ls-bound 10m --wake-delay 5m --sample 1h)
run(bare ARGS ${plain_multi} --slack 0.5 --ls-bound 600 --wake-delay 300 --sample 3600)
string(REGEX REPLACE "\"wall_seconds\": [-+.e0-9]+" "" units_out "${units_out}")
string(REGEX REPLACE "\"wall_seconds\": [-+.e0-9]+" "" bare_out "${bare_out}")
check(units_rc EQUAL 0 AND units_out STREQUAL bare_out AND units_out MATCHES "\"slack_h\": 0.5" MESSAGE
      "multi --slack 30m --ls-bound 10m ... differs from --slack 0.5 --ls-bound 600 ...:\n${units_err}")
expect_error(RC 2 ARGS multi --slack 3x MATCH "^greensched multi: --slack: '3x': unknown unit 'x'")
expect_error(RC 2 ARGS simulate --mode replay --wake-delay 1.5s MATCH "^greensched simulate: --wake-delay: '1.5s' is not a whole number of seconds")
# -q: no table on stdout (--json still prints).
run(q_sim ARGS simulate --policy fgd --seeds 1 --tune 1.0 -q)
run(q_multi ARGS multi --agent local --days 1 --load off --no-bound -q)
run(q_bound ARGS bound --policy none --seeds 1 -q)
check(q_sim_rc EQUAL 0 AND q_sim_out MATCHES "^$" AND q_multi_rc EQUAL 0 AND q_multi_out MATCHES "^$"
      AND q_bound_rc EQUAL 0 AND q_bound_out MATCHES "^$" MESSAGE
      "-q printed a table:\nsimulate:\n${q_sim_out}\nmulti:\n${q_multi_out}\nbound:\n${q_bound_out}")
# multi's default is a run that means something: local and green-plan at 70 % load, with the
# bound and each agent's share of it; counts are plural only when they are.
run(default ARGS multi --days 1 --json)
check(default_rc EQUAL 0 AND default_out MATCHES "\"agent\": \"local\"" AND default_out MATCHES "\"agent\": \"green-plan\""
      AND default_out MATCHES "\"target_load_pct\": 70" AND default_out MATCHES "\"share_pct\"" MESSAGE
      "multi's default run is not local,green-plan at 70 % with the bound:\n${default_out}\n${default_err}")
check(default_err MATCHES "over 1 day measured after a 1 day warm-up" AND NOT default_err MATCHES "[^0-9.]1 (days|seeds|LPs|runs)" MESSAGE
      "multi's lines count in the wrong number:\n${default_err}")

# --- completion scripts ---------------------------------------------------------------------------
run(bash_script ARGS completion bash)
file(WRITE "${WORK}/greensched.bash" "${bash_script_out}")
execute_process(COMMAND bash -n "${WORK}/greensched.bash" RESULT_VARIABLE bash_rc ERROR_VARIABLE bash_err)
check(bash_script_rc EQUAL 0 AND bash_rc EQUAL 0 AND bash_script_out MATCHES "--power-down-idle" MESSAGE
      "completion bash: exit ${bash_script_rc}, bash -n: ${bash_rc} ${bash_err}")
# Completing `greensched simulate --se` offers --seeds, and a bare word offers the commands.
file(WRITE "${WORK}/complete.sh"
     "source '${WORK}/greensched.bash'\n"
     "COMP_WORDS=(greensched simulate --se); COMP_CWORD=2; _greensched; echo \"A:\${COMPREPLY[*]}\"\n"
     "COMP_WORDS=(greensched mu); COMP_CWORD=1; _greensched; echo \"B:\${COMPREPLY[*]}\"\n"
     "COMP_WORDS=(greensched convert kubectl --o); COMP_CWORD=3; _greensched; echo \"C:\${COMPREPLY[*]}\"\n"
     "COMP_WORDS=(greensched simulate --mode r); COMP_CWORD=3; _greensched; echo \"D:\${COMPREPLY[*]}\"\n")
execute_process(COMMAND bash "${WORK}/complete.sh" OUTPUT_VARIABLE completed RESULT_VARIABLE rc)
check(completed MATCHES "A:--seeds\n" AND completed MATCHES "B:multi\n" AND completed MATCHES "C:--out\n" AND completed MATCHES "D:replay\n" MESSAGE
      "bash completion offered:\n${completed}")
run(zsh_script ARGS completion zsh)
check(zsh_script_rc EQUAL 0 AND zsh_script_out MATCHES "#compdef greensched" AND zsh_script_out MATCHES "'--seeds.seeds, one run" MESSAGE
      "completion zsh:\n${zsh_script_out}")
find_program(ZSH zsh)
if(ZSH)
  file(WRITE "${WORK}/_greensched" "${zsh_script_out}")
  execute_process(COMMAND ${ZSH} -n "${WORK}/_greensched" RESULT_VARIABLE zsh_rc ERROR_VARIABLE zsh_err)
  check(zsh_rc EQUAL 0 MESSAGE "zsh -n _greensched: ${zsh_err}")
endif()
message(STATUS "command-line conventions hold")
