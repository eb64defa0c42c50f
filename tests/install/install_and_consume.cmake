# cmake -P script: install, then build and run a consumer two ways.
set(prefix ${WORK}/prefix)
file(REMOVE_RECURSE ${WORK})
file(MAKE_DIRECTORY ${WORK})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  set(LAST_OUTPUT "${out}" PARENT_SCOPE)
endfunction()

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
string(STRIP "${LAST_OUTPUT}" flags)
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${CC} ${CONSUMER_SRC}/consumer.c -o ${WORK}/consumer-pc ${flags})
file(GLOB libdirs ${prefix}/lib ${prefix}/lib64)
string(REPLACE ";" ":" ldpath "${libdirs}")
set(ENV{LD_LIBRARY_PATH} ${ldpath})
run(${WORK}/consumer-pc)
message("consumer (pkg-config): ${LAST_OUTPUT}")
