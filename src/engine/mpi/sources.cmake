# The MPI engine (compiled in when CMake finds MPI; selected at run time with
# SUPERSTEP_ENGINE=mpi, which the launcher bsprun sets).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/mpi_group.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_exchange.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_encode.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_apply.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_section.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_boot.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp.c)
