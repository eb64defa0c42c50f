# cmake -P script: every example application given --help (or -h) prints
# "usage: ..." on stdout and exits 0 without running; an option without its
# value is an error (exit 2). Input: APPS, the programs separated by '|'.
string(REPLACE "|" ";" apps "${APPS}")
foreach(app ${apps})
  foreach(opt --help -h)
    execute_process(COMMAND ${app} ${opt} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err
                    TIMEOUT 20)
    if(NOT rc EQUAL 0 OR NOT out MATCHES "^usage: ")
      message(FATAL_ERROR "${app} ${opt}: exit ${rc}, expected a usage on stdout:\n${out}\n${err}")
    endif()
  endforeach()
endforeach()
list(GET apps 0 lu)
execute_process(COMMAND ${lu} -n RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 20)
if(NOT rc EQUAL 2 OR NOT err MATCHES "needs a value")
  message(FATAL_ERROR "${lu} -n: exit ${rc}, expected 2 and 'needs a value':\n${out}\n${err}")
endif()
message("examples --help: ok")
