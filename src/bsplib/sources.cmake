# BSPlib layer: <lpf/bsplib.h> (bsplib.c) and <bsp.h> (bsp.c).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bsplib.c
  ${CMAKE_CURRENT_LIST_DIR}/bsp.c)
