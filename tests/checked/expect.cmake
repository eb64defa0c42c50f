# Run one checked-mode case: cmake -DCMD="a|b|c" -DSTATUS=n -DEXPECT=regex
#   [-DREJECT=regex] [-DCHECK=value] [-DREPEAT=n] -P expect.cmake
# Fails unless the exit status is STATUS and stderr matches EXPECT (and not
# REJECT). With -DSAME=1 the program runs again without checked mode and
# its standard output must be the same. REPEAT runs it n times (each must
# end with STATUS; the last run's output is checked).
string(REPLACE "|" ";" CMD "${CMD}")
if(DEFINED CHECK)
  set(ENV{SUPERSTEP_CHECK} "${CHECK}")
endif()
if(NOT DEFINED REPEAT)
  set(REPEAT 1)
endif()
foreach(i RANGE 1 ${REPEAT})
  execute_process(COMMAND ${CMD} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                  TIMEOUT 60)
  message(STATUS "exit status ${rc}\nstdout:\n${out}\nstderr:\n${err}")
  if(NOT rc STREQUAL "${STATUS}")
    message(FATAL_ERROR "expected exit status ${STATUS}, got ${rc} (run ${i})")
  endif()
endforeach()
if(DEFINED EXPECT AND NOT err MATCHES "${EXPECT}")
  message(FATAL_ERROR "stderr does not match: ${EXPECT}")
endif()
if(DEFINED REJECT AND err MATCHES "${REJECT}")
  message(FATAL_ERROR "stderr matches what it must not: ${REJECT}")
endif()
if(SAME)
  unset(ENV{SUPERSTEP_CHECK})
  execute_process(COMMAND ${CMD} RESULT_VARIABLE rc2 OUTPUT_VARIABLE out2 ERROR_VARIABLE err2
                  TIMEOUT 60)
  if(NOT rc2 EQUAL 0 OR NOT out2 STREQUAL out)
    message(FATAL_ERROR "unchecked run differs: status ${rc2}, stdout:\n${out2}")
  endif()
endif()
