# cmake -P script: the build tree's bspcc and bspc++ (tools/bspcc) compile
# and link against the source headers and the library in the build tree.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
include(${CMAKE_CURRENT_LIST_DIR}/wrapper_checks.cmake)
unset(ENV{LD_LIBRARY_PATH})
check_wrappers(${BSPCC} ${BSPCXX} ${SOURCE_DIR}/include ${WORK})
message("bspcc/bspc++ (build tree): ok")
