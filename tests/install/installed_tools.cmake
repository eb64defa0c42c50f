# cmake -P script: every installed program runs from the prefix, and from
# the prefix moved elsewhere (no LD_LIBRARY_PATH, no build tree):
#   bspprobe, bspprof, bsprun, bspcc, bspc++: --help prints their options;
#   a short real use of each: bspcc builds a BSPlib hello, bsprun runs it
#   with a profile, bspprof re-makes the profile's report, bspprobe --quick
#   measures a tiny LPF-way series;
#   the docs are installed under share/doc/superstep, and the report,
#   bspprof --help and bspprobe --help point there; the man pages (where MAN_PAGES is ON).
# Inputs: BUILD_DIR, WORK, HELLO_C, MAN_PAGES.
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
include(${CMAKE_CURRENT_LIST_DIR}/wrapper_checks.cmake)

unset(ENV{LD_LIBRARY_PATH})
unset(ENV{SUPERSTEP_PROFILE})
unset(ENV{BSPCC_CC})
set(ENV{SUPERSTEP_ENGINE} pthread)
set(ENV{SUPERSTEP_PROFILE_QUIET} 1)
# bspprobe must not touch the user's saved parameters
set(ENV{SUPERSTEP_PARAMS} ${WORK}/params.txt)

set(tools bspprobe bspprof bsprun bspcc bspc++)

# run_in(dir cmd args...): like run(), in a working directory
function(run_in dir)
  execute_process(COMMAND ${ARGN} WORKING_DIRECTORY ${dir}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

function(check_prefix prefix tag)
  set(out ${WORK}/${tag})
  file(MAKE_DIRECTORY ${out})
  foreach(t ${tools})
    if(NOT EXISTS ${prefix}/bin/${t})
      message(FATAL_ERROR "${prefix}/bin/${t} is not installed")
    endif()
    run(${prefix}/bin/${t} --help)
    expect_in("${LAST_OUTPUT}" "${t}" "${t} --help (${tag})")
    expect_in("${LAST_OUTPUT}" "--help" "${t} --help (${tag})")
  endforeach()
  # bspcc + bsprun + bspprof: a profiled hello on 2 processes
  run(${prefix}/bin/bspcc ${HELLO_C} -o ${out}/hello)
  run(${prefix}/bin/bsprun -n 2 --profile ${out}/prof ${out}/hello)
  expect_hello("${LAST_OUTPUT}" "bsprun -n 2 hello (${tag})")
  run(${prefix}/bin/bspprof ${out}/prof)
  expect_in("${LAST_OUTPUT}" "report.html" "bspprof (${tag})")
  if(NOT EXISTS ${out}/prof/report.html)
    message(FATAL_ERROR "bspprof (${tag}) wrote no report.html")
  endif()
  # bspprobe: a tiny LPF-way measurement
  run_in(${out} ${prefix}/bin/bspprobe --quick -p 2 --only lpf --no-plot --out ${out}/probe
         --volume 64K --key-samples 3 --samples 2)
  expect_in("${LAST_OUTPUT}" "g and l, the LPF way" "bspprobe --quick (${tag})")
  if(NOT EXISTS ${out}/probe/probe.json)
    message(FATAL_ERROR "bspprobe (${tag}) wrote no probe.json")
  endif()
  if(MAN_PAGES)
    foreach(t ${tools})
      if(NOT EXISTS ${prefix}/share/man/man1/${t}.1)
        message(FATAL_ERROR "no man page ${prefix}/share/man/man1/${t}.1")
      endif()
    endforeach()
  endif()
  if(NOT EXISTS ${prefix}/share/doc/superstep/profiler.md)
    message(FATAL_ERROR "the docs are not installed under ${prefix}/share/doc/superstep")
  endif()
  # the report and bspprof --help point to the installed docs
  file(REAL_PATH ${prefix}/share/doc/superstep docdir)
  file(READ ${out}/prof/report.html html)
  expect_in("${html}" "${docdir}/profiler.md" "report.html's link to the docs (${tag})")
  run(${prefix}/bin/bspprof --help)
  expect_in("${LAST_OUTPUT}" "${docdir}/profiler.md" "bspprof --help (${tag})")
  run(${prefix}/bin/bspprobe --help)
  expect_in("${LAST_OUTPUT}" "${docdir}/probe.md" "bspprobe --help (${tag})")
  message("installed tools (${tag}): ok")
endfunction()

set(prefix ${WORK}/prefix)
run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
check_prefix(${prefix} installed)
set(moved ${WORK}/moved-prefix)
file(RENAME ${prefix} ${moved})
check_prefix(${moved} moved)
