# The superstep profiler's analysis (summary, trace, HTML report,
# prediction): part of the library for the end-of-run report, and compiled
# into bspprof (tools/bspprof) too.
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/load.c
  ${CMAKE_CURRENT_LIST_DIR}/summary.c
  ${CMAKE_CURRENT_LIST_DIR}/predict.c
  ${CMAKE_CURRENT_LIST_DIR}/trace.c
  ${CMAKE_CURRENT_LIST_DIR}/html.c
  ${CMAKE_CURRENT_LIST_DIR}/report.c)
