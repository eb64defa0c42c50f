# BSPlib layer: <lpf/bsplib.h> (bsplib.c) and <bsp.h> (bsp.c).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/bsplib.c
  ${CMAKE_CURRENT_LIST_DIR}/bsp.c)
# bsp_end unwinds the SPMD function's frames through bsp.c (see leave_to_trampoline)
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/bsp.c PROPERTIES COMPILE_OPTIONS -fexceptions)
