# Commands of the learn/ subsystem: the allocation bound and training of learned policies.
target_sources(greensched PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/bound_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/train_command.cpp
)
# Commands of the serve/ subsystem: the Kubernetes scheduler extender.
target_sources(greensched PRIVATE ${CMAKE_CURRENT_LIST_DIR}/serve_command.cpp)
# Commands of the monitor/ subsystem: node agent, workload profiler, power-model calibration.
target_sources(greensched PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/monitor_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/profile_command.cpp
  ${CMAKE_CURRENT_LIST_DIR}/calibrate_command.cpp
)
