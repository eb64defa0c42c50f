# Superstep's optional dependencies, looked for once, here. What needs one
# is built only when it was found; the summary at the end of configure
# lists each as on or off, what it adds and, when off, why.
#
# Hide any of them with -DCMAKE_DISABLE_FIND_PACKAGE_<Pkg>=ON, <Pkg> one of
#   MPI Sodium Hwloc FFTW3 OpenMP GTest Python Gnuplot
# -DSUPERSTEP_REQUIRE_ALL=ON turns a missing one (that this build would use)
# into a configure error: CI and scripts/test.sh never test less silently.
#
# Sets for the rest of the build: SUPERSTEP_HAVE_MPI, SUPERSTEP_HAVE_SODIUM,
# HWLOC_FOUND (+ HWLOC_*), SODIUM_* , SSTEP_HAVE_FFTW (+ FFTW3::fftw3,
# FFTW3_THREADS_LIBRARY), OpenMP_C_FOUND / OpenMP_CXX_FOUND, GTest_FOUND,
# Python_FOUND (+ Python_EXECUTABLE), GNUPLOT_FOUND.

list(PREPEND CMAKE_MODULE_PATH ${CMAKE_CURRENT_LIST_DIR})
# build folders configured by older versions hold pkg-config's cached
# HWLOC_FOUND / SODIUM_FOUND: only what is found now counts
unset(HWLOC_FOUND CACHE)
unset(SODIUM_FOUND CACHE)

# ---- MPI: the MPI and hybrid engines ----------------------------------------
set(SUPERSTEP_HAVE_MPI OFF)
if(NOT SUPERSTEP_WITH_MPI STREQUAL "OFF")
  find_package(MPI COMPONENTS C)
  if(MPI_C_FOUND)
    set(SUPERSTEP_HAVE_MPI ON)
  elseif(SUPERSTEP_WITH_MPI STREQUAL "ON")
    message(FATAL_ERROR "SUPERSTEP_WITH_MPI=ON but no MPI was found (run scripts/setup.sh)")
  endif()
endif()

# ---- libsodium: authentication of the MPI engine's TCP meeting -------------
find_package(Sodium)
set(SUPERSTEP_HAVE_SODIUM OFF)
if(SODIUM_FOUND)
  set(SUPERSTEP_HAVE_SODIUM ON)
endif()

# ---- hwloc: CPU order by topology for pinning ------------------------------
find_package(Hwloc)

# ---- FFTW 3: the BSP FFT (example, tests, benchmark, Python) ----------------
find_package(FFTW3)
set(SSTEP_HAVE_FFTW OFF)
if(FFTW3_FOUND)
  set(SSTEP_HAVE_FFTW ON)
endif()

# ---- OpenMP: the benchmarks' OpenMP baselines ------------------------------
if(SUPERSTEP_BUILD_BENCH)
  find_package(OpenMP COMPONENTS C CXX)
endif()

# ---- GoogleTest: the test suite --------------------------------------------
if(SUPERSTEP_BUILD_TESTS)
  find_package(GTest)
endif()

# ---- Python 3: checks in tests/prof and tests/mpi; the Python package -------
if(SUPERSTEP_BUILD_TESTS OR SKBUILD)
  find_package(Python COMPONENTS Interpreter)
endif()

# ---- gnuplot: bspprobe's plots (run at run time when on PATH) ---------------
find_package(Gnuplot QUIET)

# ---- summary ---------------------------------------------------------------
# _sstep_feature(LABEL PKG FOUND USED WHY_UNUSED HINT ADDS): one line of the
# summary in SSTEP_SUMMARY; appends LABEL to SSTEP_MISSING when the build would
# use it and it is missing.
macro(_sstep_feature label pkg found used why_unused hint adds)
  if(NOT ${used})
    set(_st "OFF")
    set(_why " [not used: ${why_unused}]")
  elseif(${found})
    set(_st "ON ")
    set(_why "")
  elseif(CMAKE_DISABLE_FIND_PACKAGE_${pkg})
    set(_st "OFF")
    set(_why " [hidden: CMAKE_DISABLE_FIND_PACKAGE_${pkg}=ON]")
    list(APPEND SSTEP_MISSING ${label})
  else()
    set(_st "OFF")
    set(_why " [not found: ${hint}]")
    list(APPEND SSTEP_MISSING ${label})
  endif()
  string(LENGTH "${label}" _n)
  math(EXPR _n "14 - ${_n}")
  string(REPEAT " " ${_n} _pad)
  list(APPEND SSTEP_SUMMARY "  ${label}${_pad}${_st} ${adds}${_why}")
endmacro()

function(_sstep_summary)
  set(SSTEP_SUMMARY "")
  set(SSTEP_MISSING "")
  set(on ON)
  set(mpi_used ON)
  if(SUPERSTEP_WITH_MPI STREQUAL "OFF")
    set(mpi_used OFF)
  endif()
  _sstep_feature(MPI MPI SUPERSTEP_HAVE_MPI mpi_used "SUPERSTEP_WITH_MPI=OFF"
    "Debian packages libopenmpi-dev openmpi-bin"
    "MPI and hybrid engines (bsprun --engine mpi|hybrid, <lpf/mpi.h>), their tests and benchmarks")
  _sstep_feature(libsodium Sodium SUPERSTEP_HAVE_SODIUM SUPERSTEP_HAVE_MPI "no MPI engine"
    "Debian package libsodium-dev"
    "authentication of the TCP meeting (without it lpf_mpi_initialize_over_tcp refuses to run)")
  _sstep_feature(hwloc Hwloc HWLOC_FOUND on "" "Debian package libhwloc-dev"
    "pinning threads in topology order (else in the OS's CPU numbering)")
  _sstep_feature(FFTW FFTW3 SSTEP_HAVE_FFTW on "" "Debian package libfftw3-dev"
    "the BSP FFT: example bspfft, its tests, the Python package's fft")
  set(thr_found OFF)
  if(FFTW3_THREADS_LIBRARY)
    set(thr_found ON)
  endif()
  set(thr_used OFF)
  set(thr_why "SUPERSTEP_BUILD_BENCH=OFF")
  if(SUPERSTEP_BUILD_BENCH AND SSTEP_HAVE_FFTW)
    set(thr_used ON)
  elseif(SUPERSTEP_BUILD_BENCH)
    set(thr_why "no FFTW")
  endif()
  _sstep_feature(fftw3_threads FFTW3 thr_found thr_used "${thr_why}" "Debian package libfftw3-dev"
    "bench_fft (FFTW with threads as the baseline)")
  set(omp_found OFF)
  if(OpenMP_C_FOUND AND OpenMP_CXX_FOUND)
    set(omp_found ON)
  endif()
  _sstep_feature(OpenMP OpenMP omp_found SUPERSTEP_BUILD_BENCH "SUPERSTEP_BUILD_BENCH=OFF"
    "a compiler with OpenMP (gcc has it)"
    "OpenMP baselines of bench_core, bench_inprod, bench_spmv, bench_pagerank, bench_sort")
  _sstep_feature(GoogleTest GTest GTest_FOUND SUPERSTEP_BUILD_TESTS "SUPERSTEP_BUILD_TESTS=OFF"
    "Debian package libgtest-dev" "the test suite (tests/, ctest)")
  set(py_used OFF)
  if(SUPERSTEP_BUILD_TESTS OR SKBUILD)
    set(py_used ON)
  endif()
  _sstep_feature(Python Python Python_FOUND py_used "SUPERSTEP_BUILD_TESTS=OFF" "Debian package python3"
    "the JSON check of tests/prof, bsprun's signal tests (and pip install . needs it)")
  _sstep_feature(gnuplot Gnuplot GNUPLOT_FOUND on "" "Debian package gnuplot-nox"
    "bspprobe's plots (it runs gnuplot at run time when on PATH)")
  set(SSTEP_SUMMARY "${SSTEP_SUMMARY}" PARENT_SCOPE)
  set(SSTEP_MISSING "${SSTEP_MISSING}" PARENT_SCOPE)
endfunction()

function(_sstep_print_summary)
  _sstep_summary()
  message(STATUS "Superstep ${PROJECT_VERSION}: optional features")
  foreach(line IN LISTS SSTEP_SUMMARY)
    message(STATUS "${line}")
  endforeach()
  if(SSTEP_MISSING)
    list(JOIN SSTEP_MISSING ", " m)
    message(STATUS "  (left out: ${m}; scripts/setup.sh installs them all)")
  endif()
endfunction()

_sstep_summary()
if(SUPERSTEP_REQUIRE_ALL AND SSTEP_MISSING)
  _sstep_print_summary()
  list(JOIN SSTEP_MISSING ", " _m)
  message(FATAL_ERROR "SUPERSTEP_REQUIRE_ALL=ON but this build would leave out: ${_m} "
    "(scripts/setup.sh installs them all; or configure without SUPERSTEP_REQUIRE_ALL)")
endif()
# the summary comes last, after every folder (and their own deferred calls)
# has said what it skips
function(_sstep_defer_summary)
  cmake_language(DEFER CALL _sstep_print_summary)
endfunction()
cmake_language(DEFER CALL _sstep_defer_summary)
