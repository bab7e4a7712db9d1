# learn/: the allocation bound, the online target workload, the learned policy and training.
find_package(PkgConfig REQUIRED)
pkg_check_modules(COINOR REQUIRED IMPORTED_TARGET cbc clp)
target_sources(greensched_lib PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/bound.cpp
  ${CMAKE_CURRENT_LIST_DIR}/arrivals.cpp
  ${CMAKE_CURRENT_LIST_DIR}/evaluation.cpp
  ${CMAKE_CURRENT_LIST_DIR}/online_target.cpp
  ${CMAKE_CURRENT_LIST_DIR}/fgd_online.cpp
  ${CMAKE_CURRENT_LIST_DIR}/features.cpp
  ${CMAKE_CURRENT_LIST_DIR}/linear_model.cpp
  ${CMAKE_CURRENT_LIST_DIR}/learned_policy.cpp
  ${CMAKE_CURRENT_LIST_DIR}/register.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cem.cpp
  ${CMAKE_CURRENT_LIST_DIR}/trainer.cpp
)
target_link_libraries(greensched_lib PUBLIC PkgConfig::COINOR)
