# PUB layer: <pub.h>, on the core and the PUB extensions E1-E4 of
# sstep_ext.h (pub.md §12), split by responsibility (pub_internal.h lists
# what each file holds).
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/pub_errors.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_objects.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_run.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_sync.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_msg.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_drma.c
  ${CMAKE_CURRENT_LIST_DIR}/pub_coll.c)
