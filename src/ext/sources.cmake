# LPF's extension headers <lpf/tags.h>, <lpf/zero.h>, <lpf/noc.h>
# (spec/lpf-ext.md §1-§5; docs/lpf-extensions.md), on the core's subset and
# oblivious syncs (sstep_ext.h).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/lx_attr.c
  ${CMAKE_CURRENT_LIST_DIR}/lx_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/lx_noc.c
  ${CMAKE_CURRENT_LIST_DIR}/lx_table.c)
