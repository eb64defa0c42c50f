# BSP FFT library (needs FFTW 3: SSTEP_HAVE_FFTW and FFTW3::fftw3 come from
# cmake/SuperstepDependencies.cmake), defined once;
# included by the examples/, tests/ and bench/ folders that need it.
include(${CMAKE_CURRENT_LIST_DIR}/../inprod/library.cmake)
if(SSTEP_HAVE_FFTW AND NOT TARGET superstep_app_fft)
  add_library(superstep_app_fft STATIC ${CMAKE_CURRENT_LIST_DIR}/bspfft.c
    ${CMAKE_CURRENT_LIST_DIR}/bspfft_plan.c ${CMAKE_CURRENT_LIST_DIR}/bspfft_exec.c
    ${CMAKE_CURRENT_LIST_DIR}/bspfft_rows.c)
  target_include_directories(superstep_app_fft PUBLIC ${CMAKE_CURRENT_LIST_DIR})
  target_link_libraries(superstep_app_fft PUBLIC superstep_app_inprod superstep FFTW3::fftw3 m)
endif()
