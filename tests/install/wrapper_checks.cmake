# Helpers for the install tests (included by the cmake -P scripts).
# Inputs: HELLO_C, HELLO_CXX (examples/bsplib), LPF_C (the LPF consumer),
# LIBNAME (the library's name for -l).

# run(cmd args...): fails the test unless cmd exits 0; LAST_OUTPUT is stdout
function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

function(expect_in text what where)
  string(FIND "${text}" "${what}" at)
  if(at LESS 0)
    message(FATAL_ERROR "${where}: expected '${what}' in:\n${text}")
  endif()
endfunction()

function(expect_not_in text what where)
  string(FIND "${text}" "${what}" at)
  if(NOT at LESS 0)
    message(FATAL_ERROR "${where}: did not expect '${what}' in:\n${text}")
  endif()
endfunction()

# a hello with P=2 printed a line for each process
function(expect_hello text where)
  expect_in("${text}" "Hello world from process 0 of 2!" "${where}")
  expect_in("${text}" "Hello world from process 1 of 2!" "${where}")
endfunction()

# check_wrappers(bspcc bspc++ include-dir out-dir): what --show and --help
# print, then a C and a C++ BSPlib hello and the LPF consumer (compiled with
# -c and linked in a second step) are built with the wrappers and run, with
# no LD_LIBRARY_PATH: the wrappers' rpath finds the library.
function(check_wrappers bspcc bspcxx incdir out)
  file(MAKE_DIRECTORY ${out})
  set(ENV{LPF_MAX_PROCS} 2)
  set(ENV{SUPERSTEP_ENGINE} pthread)
  unset(ENV{BSPCC_CC})
  unset(ENV{BSPCXX_CXX})

  run(${bspcc} --help)
  expect_in("${LAST_OUTPUT}" "bspcc" "bspcc --help")
  run(${bspcc} --show hello.c -o hello)
  set(show "${LAST_OUTPUT}")
  expect_in("${show}" " -I${incdir} " "bspcc --show")
  expect_in("${show}" " -l${LIBNAME}" "bspcc --show")
  expect_in("${show}" " -Wl,-rpath," "bspcc --show")
  expect_in("${show}" " hello.c -o hello " "bspcc --show")
  run(${bspcc} --show -c hello.c)
  expect_in("${LAST_OUTPUT}" " -I${incdir} " "bspcc --show -c")
  expect_not_in("${LAST_OUTPUT}" " -l${LIBNAME}" "bspcc --show -c")
  expect_not_in("${LAST_OUTPUT}" "-rpath" "bspcc --show -c")
  set(ENV{BSPCC_CC} "my-cc --my-flag")
  run(${bspcc} --show hello.c)
  string(FIND "${LAST_OUTPUT}" "my-cc --my-flag " at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "bspcc --show ignores BSPCC_CC: ${LAST_OUTPUT}")
  endif()
  unset(ENV{BSPCC_CC})
  run(${bspcxx} --show hello.cpp)
  expect_in("${LAST_OUTPUT}" " -l${LIBNAME}" "bspc++ --show")

  run(${bspcc} -Wall -Wextra -Werror ${HELLO_C} -o ${out}/hello_c)
  run(${out}/hello_c 2)
  expect_hello("${LAST_OUTPUT}" "bspcc hello_bsp")

  run(${bspcxx} -Wall -Wextra -Werror ${HELLO_CXX} -o ${out}/hello_cxx)
  run(${out}/hello_cxx 2)
  expect_hello("${LAST_OUTPUT}" "bspc++ hello_bsp_cpp")

  run(${bspcc} -Wall -Wextra -Werror -c ${LPF_C} -o ${out}/consumer.o)
  run(${bspcc} ${out}/consumer.o -o ${out}/consumer)
  run(${out}/consumer)
  expect_in("${LAST_OUTPUT}" "ok" "bspcc -c, then link: the LPF consumer")
endfunction()
