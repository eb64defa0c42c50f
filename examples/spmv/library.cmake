# Sparse helpers + BSP 2D SpMV library, defined once; included by the
# examples/, tests/ and bench/ folders that need it.
include(${CMAKE_CURRENT_LIST_DIR}/../inprod/library.cmake)
if(NOT TARGET superstep_app_spmv)
  add_library(superstep_app_spmv STATIC ${CMAKE_CURRENT_LIST_DIR}/sparse.c ${CMAKE_CURRENT_LIST_DIR}/spmv.c)
  target_include_directories(superstep_app_spmv PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(superstep_app_spmv PUBLIC superstep_app_inprod superstep superstep_app_util m)
endif()
