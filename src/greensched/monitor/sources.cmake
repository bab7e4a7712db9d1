# Node monitoring, workload profiling, job prediction and power-model calibration
# (greensched monitor | profile | calibrate). NVML is loaded at run time with dlopen.
target_sources(greensched_lib PRIVATE
  greensched/monitor/proc_stats.cpp
  greensched/monitor/rapl.cpp
  greensched/monitor/nvml.cpp
  greensched/monitor/sampler.cpp
  greensched/monitor/prometheus.cpp
  greensched/monitor/sample_json.cpp
  greensched/monitor/agent.cpp
  greensched/monitor/workload_profile.cpp
  greensched/monitor/profile_report.cpp
  greensched/trace/job_predictor.cpp
  greensched/monitor/job_energy.cpp
  greensched/monitor/prediction_eval.cpp
  greensched/monitor/linear_fit.cpp
  greensched/monitor/calibration.cpp
)
target_link_libraries(greensched_lib PUBLIC ${CMAKE_DL_LIBS})
