# The MPI engine (compiled in when CMake finds MPI; selected at run time with
# SUPERSTEP_ENGINE=mpi, which the launcher bsprun sets).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/mpi_group.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_exchange.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_encode.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_apply.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_split.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_section.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_range.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_range_net.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_range_shm.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_boot.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_output.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp_server.c
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp_auth.c)

# libsodium authenticates the processes of lpf_mpi_initialize_over_tcp
# (mpi_tcp_auth.c; found by cmake/SuperstepDependencies.cmake). Without it
# the engine is built all the same and only that call refuses to run.
set(SSTEP_PC_SODIUM "" PARENT_SCOPE)
if(NOT SUPERSTEP_HAVE_SODIUM)
  return()
endif()
set_source_files_properties(
  ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp.c ${CMAKE_CURRENT_LIST_DIR}/mpi_tcp_auth.c
  PROPERTIES INCLUDE_DIRECTORIES "${SODIUM_INCLUDE_DIRS}"
             COMPILE_OPTIONS "${SODIUM_CFLAGS_OTHER}"
             COMPILE_DEFINITIONS SUPERSTEP_HAVE_SODIUM=1)
# full paths, as for hwloc: the installed CMake package needs nothing more
list(APPEND SSTEP_PRIVATE_LIBS ${SODIUM_LINK_LIBRARIES})
# and the pkg-config file lists it for static links (cmake/superstep.pc.in)
set(_sstep_pc_sodium "")
foreach(_dir ${SODIUM_LIBRARY_DIRS})
  if(NOT _dir IN_LIST CMAKE_C_IMPLICIT_LINK_DIRECTORIES)
    string(APPEND _sstep_pc_sodium " -L${_dir}")
  endif()
endforeach()
foreach(_lib ${SODIUM_LIBRARIES})
  string(APPEND _sstep_pc_sodium " -l${_lib}")
endforeach()
set(SSTEP_PC_SODIUM "${_sstep_pc_sodium}" PARENT_SCOPE)
