# Collectives (<lpf/collectives.h>) and BSMP (<lpf/bsmp.h>): built only on
# the public core <lpf/core.h>, so they run on every engine.
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/collectives.c
  ${CMAKE_CURRENT_LIST_DIR}/bsmp.c)
