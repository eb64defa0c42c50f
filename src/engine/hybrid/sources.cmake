# The hybrid engine: threads inside MPI ranks (built with the MPI engine,
# whose sections and sync it uses between ranks; selected at run time with
# SUPERSTEP_ENGINE=hybrid, which bsprun --engine hybrid sets).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/hy_range.c
  ${CMAKE_CURRENT_LIST_DIR}/hy_section.c
  ${CMAKE_CURRENT_LIST_DIR}/hy_sync.c)
