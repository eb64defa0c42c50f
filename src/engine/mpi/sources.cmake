# The MPI engine (compiled in when CMake finds MPI; selected at run time with
# SUPERSTEP_ENGINE=mpi, which the launcher bsprun sets).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/mpi_engine.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_boot.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp.c)
