# The superstep profiler's analysis (summary, trace, HTML report,
# prediction): part of the library for the end-of-run report, and compiled
# into bspprof (tools/bspprof) too.
list(APPEND SSTEP_SOURCES
  ${CMAKE_CURRENT_LIST_DIR}/load.c
  ${CMAKE_CURRENT_LIST_DIR}/summary.c
  ${CMAKE_CURRENT_LIST_DIR}/predict.c
  ${CMAKE_CURRENT_LIST_DIR}/trace.c
  ${CMAKE_CURRENT_LIST_DIR}/html.c
  ${CMAKE_CURRENT_LIST_DIR}/report.c
  ${CMAKE_CURRENT_LIST_DIR}/srcline.c
  ${CMAKE_CURRENT_LIST_DIR}/docdir.c
  ${CMAKE_CURRENT_LIST_DIR}/prof_table.c)

# where the docs are (pf_doc_dir): installed relative to bin/ and lib/, the
# configured install location, and the source tree's docs/
set(_sstep_docdir "${CMAKE_INSTALL_DATAROOTDIR}/doc/superstep")
if(IS_ABSOLUTE "${_sstep_docdir}")
  set(_sstep_docfull "${_sstep_docdir}")
else()
  set(_sstep_docfull "${CMAKE_INSTALL_PREFIX}/${_sstep_docdir}")
endif()
file(RELATIVE_PATH _sstep_bin2doc "/prefix/${CMAKE_INSTALL_BINDIR}" "/prefix/${_sstep_docdir}")
file(RELATIVE_PATH _sstep_lib2doc "/prefix/${CMAKE_INSTALL_LIBDIR}" "/prefix/${_sstep_docdir}")
set_source_files_properties(${CMAKE_CURRENT_LIST_DIR}/docdir.c PROPERTIES COMPILE_DEFINITIONS
  "SSTEP_BIN_TO_DOC=\"${_sstep_bin2doc}\";SSTEP_LIB_TO_DOC=\"${_sstep_lib2doc}\";SSTEP_DOC_INSTALLED=\"${_sstep_docfull}\";SSTEP_DOC_SOURCE=\"${CMAKE_CURRENT_LIST_DIR}/../../docs\"")
