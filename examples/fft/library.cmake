# BSP FFT library (needs FFTW 3; found by pkg-config), defined once;
# included by the examples/, tests/ and bench/ folders that need it.
# Sets SSTEP_HAVE_FFTW.
include(${CMAKE_CURRENT_LIST_DIR}/../inprod/library.cmake)
if(NOT DEFINED SSTEP_HAVE_FFTW)
  find_package(PkgConfig QUIET)
  if(PKG_CONFIG_FOUND)
    pkg_check_modules(SSTEP_FFTW3 QUIET IMPORTED_TARGET GLOBAL fftw3)
  endif()
  if(TARGET PkgConfig::SSTEP_FFTW3)
    set(SSTEP_HAVE_FFTW ON CACHE INTERNAL "FFTW found")
    # Debian's libfftw3-dev ships no fftw3_threads.pc: find the library itself
    find_library(SSTEP_FFTW3_THREADS_LIB NAMES fftw3_threads HINTS ${SSTEP_FFTW3_LIBRARY_DIRS})
  else()
    set(SSTEP_HAVE_FFTW OFF CACHE INTERNAL "FFTW found")
    message(STATUS "FFTW 3 not found: the BSP FFT example, test and benchmark are skipped")
  endif()
endif()
if(SSTEP_HAVE_FFTW AND NOT TARGET PkgConfig::SSTEP_FFTW3)
  pkg_check_modules(SSTEP_FFTW3 QUIET IMPORTED_TARGET GLOBAL fftw3)
endif()
if(SSTEP_HAVE_FFTW AND NOT TARGET superstep_app_fft)
  add_library(superstep_app_fft STATIC ${CMAKE_CURRENT_LIST_DIR}/bspfft.c
    ${CMAKE_CURRENT_LIST_DIR}/bspfft_plan.c ${CMAKE_CURRENT_LIST_DIR}/bspfft_exec.c
    ${CMAKE_CURRENT_LIST_DIR}/bspfft_rows.c)
  target_include_directories(superstep_app_fft PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(superstep_app_fft PUBLIC superstep_app_inprod superstep PkgConfig::SSTEP_FFTW3 m)
endif()
