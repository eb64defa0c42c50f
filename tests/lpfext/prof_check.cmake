# The profiler records tagged and zero-cost supersteps:
#   cmake -DPROG=lpfext_prog -DCASE=tags|zerotag -DDIR=dir -DLAYER=lpf-tag|lpf-zero
#         -DPHASE=regex -P prof_check.cmake
file(REMOVE_RECURSE ${DIR})
file(MAKE_DIRECTORY ${DIR})
set(ENV{SUPERSTEP_PROFILE} ${DIR})
set(ENV{LPFEXT_CASE} ${CASE})
execute_process(COMMAND ${PROG} ${CASE} 4 RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err TIMEOUT 60)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROG} ${CASE} 4: status ${rc}\n${out}\n${err}")
endif()
file(READ ${DIR}/summary.txt summary)
if(NOT summary MATCHES "supersteps by layer: [^\n]*${LAYER} [0-9]+")
  message(FATAL_ERROR "summary.txt has no ${LAYER} supersteps:\n${summary}")
endif()
file(GLOB parts ${DIR}/*.part)
foreach(p ${parts})
  file(STRINGS ${p} x REGEX "^x ")
  if(NOT x MATCHES "${PHASE}")
    message(FATAL_ERROR "${p} has no phase line matching ${PHASE}: ${x}")
  endif()
endforeach()
message(STATUS "ok: ${LAYER}")
