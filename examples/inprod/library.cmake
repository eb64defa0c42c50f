# The inner-product library (also the broadcast/reduction helpers of the
# other applications). Included by examples/, tests/ and bench/ folders that
# need it; defined once.
if(NOT TARGET superstep_app_inprod)
  add_library(superstep_app_inprod STATIC ${CMAKE_CURRENT_LIST_DIR}/inprod.c)
  target_include_directories(superstep_app_inprod PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(superstep_app_inprod PUBLIC superstep superstep_app_util)
endif()
