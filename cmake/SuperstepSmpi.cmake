# -DSUPERSTEP_SMPI=ON: a build for SimGrid's SMPI simulator (bench/scale,
# docs/scale.md). The C compiler must be smpicc (-DCMAKE_C_COMPILER=smpicc
# -DCMAKE_CXX_COMPILER=smpicxx); the build makes the static library, with
# SUPERSTEP_SMPI defined for the engine's simulator-specific paths, and the
# scale programs linked with it, nothing else (no tests, tools, examples).
if(NOT SUPERSTEP_SMPI)
  return()
endif()
get_filename_component(_sstep_cc "${CMAKE_C_COMPILER}" NAME)
if(NOT _sstep_cc MATCHES "^smpicc")
  message(FATAL_ERROR "SUPERSTEP_SMPI=ON needs -DCMAKE_C_COMPILER=smpicc "
          "(SimGrid's compiler wrapper; Debian package libsimgrid-dev), not ${CMAKE_C_COMPILER}")
endif()
add_compile_definitions(SUPERSTEP_SMPI=1)
# smpicc's forced header turns every malloc/calloc/realloc/free into SMPI's
# (also a struct member called free); the engine needs plain ones
add_compile_definitions(SMPI_NO_OVERRIDE_MALLOC=1)
set(SUPERSTEP_BUILD_TESTS OFF)
set(SUPERSTEP_BUILD_EXAMPLES OFF)
set(SUPERSTEP_BUILD_BENCH OFF)
set(SUPERSTEP_WITH_MPI ON)
