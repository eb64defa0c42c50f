# PageRank library (on the BSP SpMV), defined once; included by the
# examples/, tests/ and bench/ folders that need it.
include(${CMAKE_CURRENT_LIST_DIR}/../spmv/library.cmake)
if(NOT TARGET superstep_app_pagerank)
  add_library(superstep_app_pagerank STATIC ${CMAKE_CURRENT_LIST_DIR}/pagerank.c)
  target_include_directories(superstep_app_pagerank PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(superstep_app_pagerank PUBLIC superstep_app_spmv superstep_app_inprod
                        superstep superstep_app_util m)
endif()
