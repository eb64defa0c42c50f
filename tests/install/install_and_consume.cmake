# cmake -P script: install, then build and run programs against the install:
#   1. a consumer with find_package(Superstep)
#   2. the consumer with pkg-config (whose paths must be plain: no '..')
#   3. BSPlib hellos in C and C++ with the installed bspcc and bspc++ (no
#      LD_LIBRARY_PATH), and what bspcc --show prints
#   4. the install tree moved elsewhere: its bspcc still works
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})
include(${CMAKE_CURRENT_LIST_DIR}/wrapper_checks.cmake)

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})

# 1. find_package(Superstep)
run(${CMAKE_COMMAND} -S ${CONSUMER_SRC} -B ${WORK}/cmake-build -G ${GENERATOR}
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${CC})
run(${CMAKE_COMMAND} --build ${WORK}/cmake-build)
run(${WORK}/cmake-build/consumer)
message("consumer (cmake): ${LAST_OUTPUT}")

# 2. pkg-config
find_program(PKG_CONFIG pkg-config REQUIRED)
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig:${prefix}/lib64/pkgconfig)
run(${PKG_CONFIG} --cflags --libs superstep)
string(STRIP "${LAST_OUTPUT}" pcflags)
message("pkg-config --cflags --libs superstep: ${pcflags}")
separate_arguments(flags UNIX_COMMAND "${pcflags}")
foreach(f ${flags})
  if(f MATCHES "(^|/)\\.\\.(/|$)")
    message(FATAL_ERROR "pkg-config prints a path with '..': ${f} (in: ${pcflags})")
  endif()
endforeach()
expect_in(" ${pcflags} " " -I${prefix}/include " "pkg-config --cflags")
string(FIND " ${pcflags} " " -L${prefix}/lib " at32)
string(FIND " ${pcflags} " " -L${prefix}/lib64 " at64)
if(at32 LESS 0 AND at64 LESS 0)
  message(FATAL_ERROR "pkg-config --libs lacks -L${prefix}/lib: ${pcflags}")
endif()
run(${CC} ${CONSUMER_SRC}/consumer.c -o ${WORK}/consumer-pc ${flags})
file(GLOB libdirs ${prefix}/lib ${prefix}/lib64)
string(REPLACE ";" ":" ldpath "${libdirs}")
set(ENV{LD_LIBRARY_PATH} ${ldpath})
run(${WORK}/consumer-pc)
message("consumer (pkg-config): ${LAST_OUTPUT}")

# 2b. docs/bspcc.md's static-link recipe: libsuperstep.a plus the -l flags
# that pkg-config --static --libs-only-l gives (MPI included)
file(GLOB staticlib ${prefix}/lib/libsuperstep.a ${prefix}/lib64/libsuperstep.a)
if(staticlib)
  run(${PKG_CONFIG} --static --libs-only-l superstep)
  string(REPLACE "-lsuperstep" "" lonly "${LAST_OUTPUT}")
  separate_arguments(lonly UNIX_COMMAND "${lonly}")
  run(${CC} ${CONSUMER_SRC}/consumer.c -o ${WORK}/consumer-static -I${prefix}/include
      ${staticlib} ${lonly})
  run(${WORK}/consumer-static)
  message("consumer (static recipe): ${LAST_OUTPUT}")
endif()

# 2c. the installed docs: README beside docs/, its links resolving there,
# and manual pages that name this prefix's documentation
set(docdir ${prefix}/share/doc/superstep)
if(NOT EXISTS ${docdir}/README.md)
  message(FATAL_ERROR "README.md is not installed in ${docdir}")
endif()
file(READ ${docdir}/README.md readme)
# (no brackets in the pattern: they would stop CMake splitting the list)
string(REGEX MATCHALL "\\(([a-z0-9_./-]+\\.md)\\)" links "${readme}")
foreach(l ${links})
  string(REGEX REPLACE "^\\(|\\)$" "" l "${l}")
  if(NOT EXISTS ${docdir}/${l})
    message(FATAL_ERROR "installed README links to ${l}, which is not in ${docdir}")
  endif()
endforeach()
file(GLOB manpages ${prefix}/share/man/man1/*.1)
foreach(m ${manpages})
  file(READ ${m} page)
  # (roff writes a path's hyphens as \-; the prefix is text, not a pattern)
  string(REPLACE "\\-" "-" page "${page}")
  string(FIND "${page}" "${prefix}/share/doc/superstep" here)
  if(page MATCHES "share/doc/superstep" AND here EQUAL -1)
    message(FATAL_ERROR "${m} names a documentation directory outside the prefix ${prefix}")
  endif()
endforeach()
message("installed docs: ok")

# 3. the installed compiler wrappers; their programs find the library
# through the rpath alone
unset(ENV{LD_LIBRARY_PATH})
check_wrappers(${prefix}/bin/bspcc ${prefix}/bin/bspc++ ${prefix}/include ${WORK}/installed)
message("bspcc/bspc++ (installed): ok")

# 4. a moved install tree: the wrappers find it from their own location
set(moved ${WORK}/moved-prefix)
file(RENAME ${prefix} ${moved})
check_wrappers(${moved}/bin/bspcc ${moved}/bin/bspc++ ${moved}/include ${WORK}/moved)
run(${moved}/bin/bspcc --show hello.c)
expect_not_in("${LAST_OUTPUT}" "${prefix}/" "the moved bspcc --show")
message("bspcc/bspc++ (moved install tree): ok")
