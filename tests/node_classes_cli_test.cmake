# Node classes change nothing but the time: every output file of simulate (inflation and replay
# with power-down) and multi is byte for byte the same with GREENSCHED_NODE_CLASSES=off (every
# node scored) and on, on the built-in workload and fleet. Run with -DGREENSCHED=<binary>
# -DWORK=<scratch folder>.
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(run_both name)
  foreach(mode off on)
    execute_process(COMMAND ${CMAKE_COMMAND} -E env GREENSCHED_NODE_CLASSES=${mode}
                            "${GREENSCHED}" ${ARGN} --out "${WORK}/${name}-${mode}" -q
                    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    if(NOT rc EQUAL 0)
      message(FATAL_ERROR "greensched ${ARGN} (node classes ${mode}): exit ${rc}\n${out}\n${err}")
    endif()
  endforeach()
  file(GLOB files RELATIVE "${WORK}/${name}-off" "${WORK}/${name}-off/*.csv")
  list(LENGTH files count)
  if(count EQUAL 0)
    message(FATAL_ERROR "${name}: no output files")
  endif()
  foreach(f ${files})
    file(READ "${WORK}/${name}-off/${f}" a)
    file(READ "${WORK}/${name}-on/${f}" b)
    if(a MATCHES "^[^\n]*,wall_seconds\n")
      # simulate's inflation summary ends each row with the run's wall seconds.
      string(REGEX REPLACE ",[0-9.]+\n" "\n" a "${a}")
      string(REGEX REPLACE ",[0-9.]+\n" "\n" b "${b}")
    endif()
    if(NOT a STREQUAL b)
      message(FATAL_ERROR "${name}: ${f} differs between node classes off and on")
    endif()
  endforeach()
  message(STATUS "${name}: ${count} files identical")
endfunction()

run_both(inflation simulate --policy all,pwr,fgd-energy,pwr:200+fgd:800 --seeds 42-43)
run_both(replay simulate --mode replay --load 70 --days 1 --warmup-days 0.5
         --policy fgd,pwr,bestfit,fgd-energy --power-down-idle off,1800)
run_both(multi multi --load 70 --days 2 --power-down-idle 1800)
