list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/pthread_engine.c
  ${CMAKE_CURRENT_LIST_DIR}/pt_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/pt_hook.c
  ${CMAKE_CURRENT_LIST_DIR}/affinity.c
  ${CMAKE_CURRENT_LIST_DIR}/pt_range.c)
# hwloc orders CPUs by topology for pinning (optional; found by
# cmake/SuperstepDependencies.cmake)
if(HWLOC_FOUND)
  set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/affinity.c PROPERTIES
    COMPILE_DEFINITIONS SUPERSTEP_HAVE_HWLOC=1
    INCLUDE_DIRECTORIES "${HWLOC_INCLUDE_DIRS}")
  list(APPEND SSTEP_PRIVATE_LIBS ${HWLOC_LINK_LIBRARIES})
endif()
