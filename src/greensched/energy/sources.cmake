# energy/: on-site solar and wind from weather, prices, batteries, cooling, site controllers.
# The dispatch LP uses CLP, found the same way as learn/ does.
if(NOT TARGET PkgConfig::COINOR)
  find_package(PkgConfig REQUIRED)
  pkg_check_modules(COINOR REQUIRED IMPORTED_TARGET cbc clp)
endif()
target_sources(greensched_lib PRIVATE
  ${CMAKE_CURRENT_LIST_DIR}/hourly_series.cpp
  ${CMAKE_CURRENT_LIST_DIR}/price_series.cpp
  ${CMAKE_CURRENT_LIST_DIR}/weather.cpp
  ${CMAKE_CURRENT_LIST_DIR}/solar.cpp
  ${CMAKE_CURRENT_LIST_DIR}/wind.cpp
  ${CMAKE_CURRENT_LIST_DIR}/battery.cpp
  ${CMAKE_CURRENT_LIST_DIR}/cooling.cpp
  ${CMAKE_CURRENT_LIST_DIR}/controller.cpp
  ${CMAKE_CURRENT_LIST_DIR}/dispatch_lp.cpp
  ${CMAKE_CURRENT_LIST_DIR}/controller_lp.cpp
)
target_link_libraries(greensched_lib PUBLIC PkgConfig::COINOR)
